import { basename } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { clearStaleRefLocks } from '../../workspace/reopen-workspace.js';
import type { Repository } from '../../workspace/git/repository.js';
import { repairLogFromTasks } from './log-repair.js';
import { latestAgentsByTask } from './prior-agents.js';
import type { UnfinishedRun } from '../setup/run-history.js';

/** What `colony resume` found and settled before the runner takes the run up again. */
export interface ResumedRun {
  readonly rootTaskId: string;
  /** Open task → the agent that had it, for the runner to give the task back to. */
  readonly priorAgents: ReadonlyMap<string, string>;
  /** Workspaces of workers that will be taken up again: the sweep leaves them as they are. */
  readonly keepWorkspaces: ReadonlySet<string>;
}

export interface TakeUpRunOptions {
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly repo: Repository;
  readonly runId: string;
  readonly unfinished: UnfinishedRun;
  readonly record: (event: EventBody) => void;
  readonly now: () => number;
}

/**
 * Settles what the stopped process left, before anything runs again. The run lock is held, so
 * whoever held the run's leases is gone: its running tasks are opened for this runner (each
 * claim counts a new attempt). The log gets what the task table proves happened but the
 * crash kept it from recording. Git locks a killed git process left are cleared. Each open
 * task keeps the agent it had, and each such worker its workspace. Records `run.resumed`.
 */
export async function takeUpRun(options: TakeUpRunOptions): Promise<ResumedRun> {
  const { events, tasks, runId, record } = options;
  const lastSeq = await events.lastSeq();
  const released = await tasks.releaseAbandoned(runId, options.now());
  for (const task of released) {
    record({ type: 'task.released', data: { taskId: task.id, reason: 'the run stopped while it ran (crashed or killed); colony resume takes it up again' } });
  }
  const repaired = await repairLogFromTasks(events, tasks, runId);
  const clearedLocks = await clearStaleRefLocks(options.repo);

  const all = await tasks.listTasks(runId);
  const root = all.find((task) => task.parentTaskId === null);
  if (root === undefined) throw new Error(`the run ${runId} has no root task in the task table`);
  const open = all.filter((task) => task.status === 'open' || task.status === 'running');
  const latest = await latestAgentsByTask(events, runId);
  const workspaceOf = await latestWorkspaces(events, runId);
  const priorAgents = new Map<string, string>();
  const keepWorkspaces = new Set<string>();
  for (const task of open) {
    const agentId = latest.get(task.id);
    if (agentId === undefined) continue;
    priorAgents.set(task.id, agentId);
    const workspace = workspaceOf.get(agentId);
    if (task.kind === 'worker' && workspace !== undefined) keepWorkspaces.add(workspace);
  }
  record({
    type: 'run.resumed',
    data: { resumes: options.unfinished.resumes + 1, lastSeq, released: released.map((task) => task.id), repaired, clearedLocks },
  });
  return { rootTaskId: root.id, priorAgents, keepWorkspaces };
}

/** Agent → the id (directory name) of the last workspace made for it. */
async function latestWorkspaces(events: EventStore, runId: string): Promise<Map<string, string>> {
  const workspaces = new Map<string, string>();
  for (const event of await events.read({ runId, types: ['workspace.created'] })) {
    if (event.type === 'workspace.created') workspaces.set(event.agentId, basename(event.data.path));
  }
  return workspaces;
}
