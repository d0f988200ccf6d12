import type { EventStore } from '../../store/events/event-store.js';
import type { TaskQueue } from '../../store/tasks/task-store.js';
import type { GreenState } from './types.js';

/**
 * Closes the open failures `shown` (a red snapshot's failure lines at `commit`) no longer
 * holds: fixed by then. Their lines are remembered as fixed at `commit`.
 */
export function closeFixedFailures(state: GreenState, shown: readonly string[], commit: string): void {
  const still = new Set(shown);
  for (const failure of state.open) {
    if (failure.lines.some((line) => still.has(line))) continue;
    for (const line of failure.lines) state.fixedAt.set(line, commit);
  }
  state.open = state.open.filter((failure) => failure.lines.some((line) => still.has(line)));
}

/** A pass: nothing is open, and no line's floor is older than the passing commit. */
export function markPassed(state: GreenState, commit: string): void {
  state.good = commit;
  state.open = [];
  state.fixedAt.clear();
}

/**
 * The loop's state as the run's log left it: a resumed run neither snapshots from scratch nor
 * tells a planner again of a failure it was told of before the restart.
 */
export async function restoreGreenState(events: EventStore, tasks: TaskQueue, runId: string): Promise<GreenState> {
  const state: GreenState = { good: null, lastSnapshot: null, lastSnapshotAt: null, command: null, open: [], reported: new Set(), fixedAt: new Map() };
  let lastSnapshotAt: number | null = null;
  for (const event of await events.read({ runId, types: ['green.checked', 'green.bisected'] })) {
    if (event.type === 'green.checked') {
      state.lastSnapshot = { commit: event.data.commit, passed: event.data.passed };
      state.command = event.data.command;
      lastSnapshotAt = event.ts;
      // As the loop did at the time: a pass clears, a red snapshot closes what it no longer shows.
      if (event.data.passed) markPassed(state, event.data.commit);
      else closeFixedFailures(state, event.data.failures, event.data.commit);
      continue;
    }
    if (event.type !== 'green.bisected') continue;
    const { data } = event;
    const key = data.firstBad ?? 'before-the-run';
    state.reported.add(key);
    const open = state.open.find((failure) => failure.key === key);
    if (open !== undefined) {
      open.lines = [...new Set([...open.lines, ...data.failures])];
      continue;
    }
    const title = data.taskId === null ? null : ((await tasks.getTask(data.taskId))?.title ?? null);
    state.open.push({
      key,
      lines: [...data.failures],
      report: {
        origin: { firstBad: data.firstBad, good: data.good, lines: data.failures, checks: data.checks, durationMs: data.durationMs },
        culprit: { taskId: data.taskId, title, agentId: data.agentId, plannerTaskId: data.plannerTaskId },
        subject: data.subject,
      },
    });
  }
  return { ...state, lastSnapshotAt };
}

/**
 * Main when a run first started, as its log tells it (the green loop's floor before any
 * snapshot passed, for a resumed run and for `colony green --now`): what main was before the
 * run's first landing, or `mainNow` when nothing landed.
 */
export async function runGreenBase(events: EventStore, runId: string, mainNow: string): Promise<string> {
  const [first] = await events.read({ runId, types: ['merge.landed'], limit: 1 });
  return first?.type === 'merge.landed' ? first.data.mainBefore : mainNow;
}

/**
 * The run's goal as it stands: the latest edit the root planner was told of (`goal.changed`),
 * else the root task's brief. It is what the run is checked and judged by.
 */
export async function goalAsItStands(events: EventStore, tasks: TaskQueue, runId: string, rootTaskId: string): Promise<string> {
  const edited = (await events.read({ runId, types: ['goal.changed'] })).findLast((event) => event.type === 'goal.changed' && event.data.goal !== undefined);
  return (edited?.type === 'goal.changed' ? edited.data.goal : undefined) ?? (await tasks.getTask(rootTaskId))?.body ?? '';
}
