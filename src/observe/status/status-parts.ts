import type { TaskStatus } from '../../store/tasks/task-store.js';
import type { GreenHealth } from '../green-health.js';
import type { AcceptanceStatus, GreenStatus, RunStatus } from './types.js';

/** The green health without its per-move list, which grows with the run: a status stays small. */
export function greenStatusOf(health: GreenHealth): GreenStatus {
  return {
    commit: health.commit,
    redShare: health.redShare,
    snapshots: health.snapshots,
    meanTimeToGreenS: health.meanTimeToGreenS,
    redSnapshots: health.redSnapshots,
    redNow: health.redNow,
    since: health.since,
    failures: health.failures,
    bisects: health.bisects,
    branch: health.branch,
    blocked: health.blocked,
    lastSnapshot: health.lastSnapshot,
  };
}

export function countVerdicts(verdicts: ReadonlyMap<string, 'passed' | 'failed' | 'not-run' | 'false-claim'>): AcceptanceStatus {
  const all = [...verdicts.values()];
  const falseClaims = all.filter((verdict) => verdict === 'false-claim').length;
  return {
    passed: all.filter((verdict) => verdict === 'passed').length,
    failed: all.filter((verdict) => verdict === 'failed').length + falseClaims,
    notRun: all.filter((verdict) => verdict === 'not-run').length,
    falseClaims,
  };
}

export function countTasks(tasks: readonly { status: TaskStatus; parentTaskId: string | null }[]): RunStatus['tasks'] {
  const byStatus: Record<TaskStatus, number> = { open: 0, running: 0, done: 0, partial: 0, blocked: 0, failed: 0 };
  let total = 0;
  for (const task of tasks) {
    // The root planner's task is the run itself, not work the tree took on.
    if (task.parentTaskId === null) continue;
    byStatus[task.status] += 1;
    total += 1;
  }
  return { total, byStatus };
}
