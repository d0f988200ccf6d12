import type { AgentRole } from '../../events/event-fields.js';
import type { RunRequest, TaskRecord, TaskStatus } from '../../store/tasks/task-store.js';
import type { SteeringStores } from './steering.js';

/**
 * The most workers `colony workers` sets. Each worker is a model conversation, a workspace and
 * its commands; past a few hundred one machine runs out of memory, disk or provider quota long
 * before the run goes faster.
 */
export const MAX_WORKERS = 256;

/** An agent of the run that can be stopped: it works on a task that has not closed. */
export interface AgentAtWork {
  readonly taskId: string;
  /** The agent on the task; null when none has started on it yet (it was just claimed). */
  readonly agentId: string | null;
  readonly role: AgentRole;
  readonly title: string;
  readonly status: TaskStatus;
}

export type WorkersResult =
  /**
   * `previous` is the limit before (null for a run that recorded none); `request` is null when
   * the limit already was `workers`, so nothing changed.
   */
  | { readonly ok: true; readonly workers: number; readonly previous: number | null; readonly request: RunRequest | null }
  | { readonly ok: false; readonly error: string };

export type StopResult =
  /** `repeated` when a stop of the task was asked for already: `request` is that one, and nothing was added. */
  | { readonly ok: true; readonly agent: AgentAtWork; readonly request: RunRequest; readonly repeated: boolean }
  | { readonly ok: false; readonly error: string };

/**
 * Sets how many workers the run may run at once from now on. More start as tasks wait for
 * them; with fewer, no worker is stopped: the runner claims no new one until fewer than
 * `workers` run. Planners never count. Kept in the task store like the user's andon, so it
 * works from any process and a resumed run keeps it. Refuses a number that is not a whole
 * number from 1 to MAX_WORKERS, and a state directory without the run.
 */
export async function setWorkers(stores: SteeringStores, runId: string, workers: number, reason: string, now = Date.now()): Promise<WorkersResult> {
  if (!Number.isSafeInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    return {
      ok: false,
      error: `the worker limit must be a whole number from 1 to ${MAX_WORKERS}, got ${String(workers)}: say how many workers may run at once, e.g. colony workers 2. To let none start for a while, hold the run with colony andon.`,
    };
  }
  if ((await rootTaskOf(stores, runId)) === null) return { ok: false, error: `there is no run ${runId} in this state directory to set the workers of.` };
  const previous = await currentWorkerLimit(stores, runId);
  if (previous === workers) return { ok: true, workers, previous, request: null };
  const request = await stores.tasks.requestWorkers(runId, workers, reason, now);
  await stores.writer?.recordSteering();
  return { ok: true, workers, previous, request };
}

/**
 * Stops the agent working on one task of the run, named by its task id or its agent id: it
 * stops at its next safe point, and its task closes with a failed handoff to its planner that
 * says it was stopped by the user and why (with what the agent itself said last), so the
 * planner can publish the work again, changed. A stopped sub-planner's own tasks go on to their
 * end. Refused, saying what to do instead: the root planner (that is the run), a task that has
 * finished or that no agent has taken up yet, and an id the run does not know.
 */
export async function stopAgent(stores: SteeringStores, runId: string, target: string, reason: string, now = Date.now()): Promise<StopResult> {
  const wanted = target.trim();
  const root = await rootTaskOf(stores, runId);
  if (root === null) return { ok: false, error: `there is no run ${runId} in this state directory, so there is no agent to stop.` };
  const agents = await agentsByTask(stores, runId);
  if (wanted === '') return { ok: false, error: `say which agent to stop, by its task id or agent id: colony stop <id>. ${await agentsAtWorkText(stores, runId, agents)}` };
  const task = await findTask(stores, runId, wanted, agents);
  if (task === null) return { ok: false, error: `run ${runId} has no task or agent ${wanted}. ${await agentsAtWorkText(stores, runId, agents)}` };
  const agent = summaryOf(task, agents);
  if (task.parentTaskId === null) {
    return {
      ok: false,
      error: `${wanted} is the root planner (task ${task.id}): it is the run itself, so it is not stopped alone. Stop the run with Ctrl-C in its terminal (colony resume takes it up again), or hold it with colony andon (no new task starts until colony andon --release).`,
    };
  }
  if (task.status !== 'open' && task.status !== 'running') {
    return { ok: false, error: `task ${task.id} "${task.title}" has finished (${task.status}): no agent works on it any more. ${await agentsAtWorkText(stores, runId, agents)}` };
  }
  if (task.attempt === 0) {
    return {
      ok: false,
      error: `task ${task.id} "${task.title}" has not started: it waits to be claimed, so no agent works on it yet. Stop it once colony status shows it running, or hold the run with colony andon so nothing new starts.`,
    };
  }
  const earlier = (await stores.tasks.runRequests(runId, 0)).find((request) => request.kind === 'stop' && request.taskId === task.id);
  if (earlier !== undefined) return { ok: true, agent, request: earlier, repeated: true };
  const request = await stores.tasks.requestStop(runId, task.id, reason, now);
  await stores.writer?.recordSteering();
  return { ok: true, agent, request, repeated: false };
}

/** The agents of the run that `stopAgent` can stop (every task claimed and not closed, but the root planner's), oldest first. */
export async function listAgentsAtWork(stores: SteeringStores, runId: string): Promise<AgentAtWork[]> {
  return agentsAtWork(stores, runId, await agentsByTask(stores, runId));
}

/** The agents as a person reads them in a message: one line each, `task-x  worker-y  worker  "Title"`. */
export function describeAgentsAtWork(agents: readonly AgentAtWork[]): string {
  return agents.map((agent) => `  ${agent.taskId}  ${agent.agentId ?? '(starting)'}  ${agent.role}  "${agent.title}"`).join('\n');
}

/**
 * The run's worker limit now: the latest the user asked for (in the task store, recorded in the
 * log or not yet), else the run's `--workers` from its `run.configured`.
 */
export async function currentWorkerLimit(stores: Pick<SteeringStores, 'events' | 'tasks'>, runId: string): Promise<number | null> {
  const asked = (await stores.tasks.runRequests(runId, 0)).findLast((request) => request.kind === 'workers');
  if (asked?.kind === 'workers') return asked.workers;
  const configured = (await stores.events.read({ runId, types: ['run.configured'] })).find((event) => event.type === 'run.configured');
  return configured?.type === 'run.configured' ? configured.data.settings.workers : null;
}

async function rootTaskOf(stores: SteeringStores, runId: string): Promise<TaskRecord | null> {
  return (await stores.tasks.listTasks(runId)).find((task) => task.parentTaskId === null) ?? null;
}

/** The latest agent started on each task of the run, and every agent's task. */
interface RunAgents {
  readonly byTask: ReadonlyMap<string, string>;
  readonly taskOf: ReadonlyMap<string, string>;
}

async function agentsByTask(stores: SteeringStores, runId: string): Promise<RunAgents> {
  const byTask = new Map<string, string>();
  const taskOf = new Map<string, string>();
  for (const event of await stores.events.read({ runId, types: ['agent.started'] })) {
    if (event.type !== 'agent.started') continue;
    byTask.set(event.data.taskId, event.agentId);
    taskOf.set(event.agentId, event.data.taskId);
  }
  return { byTask, taskOf };
}

async function findTask(stores: SteeringStores, runId: string, target: string, agents: RunAgents): Promise<TaskRecord | null> {
  const byId = await stores.tasks.getTask(target);
  if (byId !== null && byId.runId === runId) return byId;
  const taskId = agents.taskOf.get(target);
  const byAgent = taskId === undefined ? null : await stores.tasks.getTask(taskId);
  return byAgent !== null && byAgent.runId === runId ? byAgent : null;
}

async function agentsAtWork(stores: SteeringStores, runId: string, agents: RunAgents): Promise<AgentAtWork[]> {
  return (await stores.tasks.listTasks(runId))
    .filter((task) => task.parentTaskId !== null && task.attempt > 0 && (task.status === 'open' || task.status === 'running'))
    .map((task) => summaryOf(task, agents));
}

async function agentsAtWorkText(stores: SteeringStores, runId: string, agents: RunAgents): Promise<string> {
  const atWork = await agentsAtWork(stores, runId, agents);
  if (atWork.length === 0) return 'No agent of the run is at work now but the root planner.';
  return `Stop one of the agents at work, by task id or agent id:\n${describeAgentsAtWork(atWork)}`;
}

function summaryOf(task: TaskRecord, agents: RunAgents): AgentAtWork {
  return {
    taskId: task.id,
    agentId: agents.byTask.get(task.id) ?? null,
    role: task.parentTaskId === null ? 'root-planner' : task.kind === 'planner' ? 'sub-planner' : 'worker',
    title: task.title,
    status: task.status,
  };
}
