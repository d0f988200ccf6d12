import type { AgentRole } from '../../events/event-fields.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { RunAndonChange, TaskRecord, TaskStatus, TaskStore } from '../../store/tasks/task-store.js';
import type { SteeringWriter } from './steering-record.js';

/**
 * How a person steers a run while it goes: a message to one of its planners, and the andon on
 * the whole run. Plain functions over the run's stores, for the CLI (`colony say`, `colony
 * andon`) and for UIs in the run's own process. They write to the task store only, which any
 * process may write; the record in the event log is the `writer`'s (see `SteeringWriter`).
 */
export interface SteeringStores {
  readonly events: EventStore;
  readonly tasks: TaskStore;
  /**
   * Present in the process that writes the run's log (the run itself, or a command holding the
   * state directory's run lock while no run goes): it records the change at once and wakes the
   * planner or the runner. Without it, the running process records it the next time it looks
   * at the store (its runner does every half second) and its agents notice by polling.
   */
  readonly writer?: SteeringWriter;
}

/** A planner of a run that can still be told something. */
export interface PlannerSummary {
  readonly taskId: string;
  /** The agent on the task; null when none has started on it yet (it waits to be claimed). */
  readonly agentId: string | null;
  readonly role: Exclude<AgentRole, 'worker'>;
  readonly title: string;
  readonly status: TaskStatus;
}

export type SendResult =
  | { readonly ok: true; readonly recipient: PlannerSummary; readonly inboxSeq: number }
  | { readonly ok: false; readonly error: string };

export type RunAndonResult =
  /** `change` is null when the run was already paused for the same reason. */
  | { readonly ok: true; readonly andon: RunAndonChange; readonly change: RunAndonChange | null }
  | { readonly ok: false; readonly error: string };

export type RunAndonReleaseResult =
  /** `change` is null when the run was not held, so there was nothing to release. */
  | { readonly ok: true; readonly change: RunAndonChange | null }
  | { readonly ok: false; readonly error: string };

/**
 * Leaves `text` in the inbox of a planner of the run: the root planner when `target` is null,
 * else the planner whose task id or agent id it is. The planner takes it in before its next
 * model call, or wakes for it while it waits. A worker, a planner that finished, or an id the
 * run does not know is refused with what to do instead.
 */
export async function sendToPlanner(stores: SteeringStores, runId: string, target: string | null, text: string, now = Date.now()): Promise<SendResult> {
  if (text.trim() === '') return { ok: false, error: 'the message is empty: say what the planner should know, e.g. colony say "Build the parser before the printer".' };
  const root = await rootTaskOf(stores.tasks, runId);
  if (root === null) return { ok: false, error: `run ${runId} has no root planner in this state directory, so there is no planner to tell.` };
  const agents = await plannerAgents(stores.events, runId);
  const found = target === null ? { task: root } : await findTarget(stores, runId, target, agents);
  if ('error' in found) return { ok: false, error: found.error };
  const { task } = found;
  if (task.kind !== 'planner') {
    const parent = task.parentTaskId === null ? null : await stores.tasks.getTask(task.parentTaskId);
    const instead = parent === null ? '' : ` Tell its planner instead: colony say "…" --to ${parent.id}${plannerLabel(parent, agents)}.`;
    return { ok: false, error: `${target ?? task.id} is the worker task ${task.id} "${task.title}": workers take no messages, they know only their task.${instead}` };
  }
  if (task.status !== 'open' && task.status !== 'running') {
    return {
      ok: false,
      error: `the planner of task ${task.id} "${task.title}" has finished (${task.status}) and reads no more messages. ${await plannersStillAtWork(stores, runId, agents)}`,
    };
  }
  const message = await stores.tasks.sendMessage(runId, task.id, text, now);
  await stores.writer?.recordSteering();
  return { ok: true, recipient: summaryOf(task, agents), inboxSeq: message.seq };
}

/**
 * Pulls the user's andon on the whole run: no task of it is claimed, by any runner, until
 * `releaseRun`; agents already running go on. It is kept in the task store, so it outlasts the
 * process, and no planner's andon lifts it.
 */
export async function pullRunAndon(stores: SteeringStores, runId: string, reason: string, now = Date.now()): Promise<RunAndonResult> {
  if ((await rootTaskOf(stores.tasks, runId)) === null) return { ok: false, error: `there is no run ${runId} in this state directory to pause.` };
  const change = await stores.tasks.setRunAndon(runId, true, reason, now);
  await stores.writer?.recordSteering();
  const andon = await stores.tasks.runAndon(runId);
  if (andon === null) throw new Error(`run ${runId} is not paused right after its andon was pulled`);
  return { ok: true, andon, change };
}

/** Releases the user's andon on the run: its tasks are claimed again (within half a second in a running process). */
export async function releaseRunAndon(stores: SteeringStores, runId: string, reason: string, now = Date.now()): Promise<RunAndonReleaseResult> {
  if ((await rootTaskOf(stores.tasks, runId)) === null) return { ok: false, error: `there is no run ${runId} in this state directory to release.` };
  const change = await stores.tasks.setRunAndon(runId, false, reason, now);
  await stores.writer?.recordSteering();
  return { ok: true, change };
}

/** The run's planners that can still be told something (open or running), oldest first. */
export async function listPlanners(stores: SteeringStores, runId: string): Promise<PlannerSummary[]> {
  return plannersAtWork(stores.tasks, runId, await plannerAgents(stores.events, runId));
}

/** The planners as a person reads them in a message: one line each, `task-x  planner-y  sub-planner  "Title"`. */
export function describePlanners(planners: readonly PlannerSummary[]): string {
  return planners.map((planner) => `  ${planner.taskId}  ${planner.agentId ?? '(not started)'}  ${planner.role}  "${planner.title}"`).join('\n');
}

async function rootTaskOf(tasks: TaskStore, runId: string): Promise<TaskRecord | null> {
  return (await tasks.listTasks(runId)).find((task) => task.parentTaskId === null) ?? null;
}

/** Every agent started in the run, by id, with its task; the latest agent of each task, by task. */
interface RunAgents {
  readonly byAgent: ReadonlyMap<string, { readonly taskId: string; readonly role: AgentRole }>;
  readonly byTask: ReadonlyMap<string, string>;
}

async function plannerAgents(events: EventStore, runId: string): Promise<RunAgents> {
  const byAgent = new Map<string, { taskId: string; role: AgentRole }>();
  const byTask = new Map<string, string>();
  for (const event of await events.read({ runId, types: ['agent.started'] })) {
    if (event.type !== 'agent.started') continue;
    byAgent.set(event.agentId, { taskId: event.data.taskId, role: event.data.role });
    byTask.set(event.data.taskId, event.agentId);
  }
  return { byAgent, byTask };
}

async function findTarget(stores: SteeringStores, runId: string, target: string, agents: RunAgents): Promise<{ task: TaskRecord } | { error: string }> {
  const byId = await stores.tasks.getTask(target);
  if (byId !== null && byId.runId === runId) return { task: byId };
  const agent = agents.byAgent.get(target);
  const byAgent = agent === undefined ? null : await stores.tasks.getTask(agent.taskId);
  if (byAgent !== null && byAgent.runId === runId) return { task: byAgent };
  return { error: `run ${runId} has no task or agent ${target}. ${await plannersStillAtWork(stores, runId, agents)}` };
}

async function plannersAtWork(tasks: TaskStore, runId: string, agents: RunAgents): Promise<PlannerSummary[]> {
  return (await tasks.listTasks(runId))
    .filter((task) => task.kind === 'planner' && (task.status === 'open' || task.status === 'running'))
    .map((task) => summaryOf(task, agents));
}

async function plannersStillAtWork(stores: SteeringStores, runId: string, agents: RunAgents): Promise<string> {
  const planners = await plannersAtWork(stores.tasks, runId, agents);
  if (planners.length === 0) return 'No planner of the run is at work any more.';
  return `Send to one of the planners at work, by task id or agent id (--to), or leave --to out for the root planner:\n${describePlanners(planners)}`;
}

function summaryOf(task: TaskRecord, agents: RunAgents): PlannerSummary {
  return {
    taskId: task.id,
    agentId: agents.byTask.get(task.id) ?? null,
    role: task.parentTaskId === null ? 'root-planner' : 'sub-planner',
    title: task.title,
    status: task.status,
  };
}

function plannerLabel(task: TaskRecord, agents: RunAgents): string {
  const agentId = agents.byTask.get(task.id);
  return agentId === undefined ? '' : ` (agent ${agentId})`;
}
