import { rebuildConversation, type RebuiltConversation } from '../../agent/conversation-rebuild.js';
import type { ColonyEvent } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { Handoff } from '../../events/handoff.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskRecord } from '../../store/tasks/task-store.js';

/**
 * An agent an earlier session of the run started on a task that is still open: `colony
 * resume` gives the task back to it (same id, its conversation rebuilt from the log) rather
 * than to a new agent that would know nothing of what was done.
 */
export interface PriorAgent {
  readonly agentId: string;
  readonly role: AgentRole;
  /** Every event recorded under the agent, in order. */
  readonly events: readonly ColonyEvent[];
  readonly conversation: RebuiltConversation;
}

/** The latest agent started on each task of the run: task id → agent id. */
export async function latestAgentsByTask(events: EventStore, runId: string): Promise<Map<string, string>> {
  const latest = new Map<string, string>();
  for (const event of await events.read({ runId, types: ['agent.started'] })) {
    if (event.type === 'agent.started') latest.set(event.data.taskId, event.agentId);
  }
  return latest;
}

/** The prior agent of `taskId` with its events and conversation, or null when the task never had one. */
export async function loadPriorAgent(events: EventStore, runId: string, agentId: string | undefined): Promise<PriorAgent | null> {
  if (agentId === undefined) return null;
  const own = await events.read({ runId, agentId });
  const started = own.find((event) => event.type === 'agent.started');
  if (started === undefined || started.type !== 'agent.started') return null;
  return { agentId, role: started.data.role, events: own, conversation: rebuildConversation(own) };
}

/** The seq of the `tool.started` of `callId`, or 0 when it never started. */
export function startedSeqOf(prior: PriorAgent, callId: string): number {
  const started = prior.events.findLast((event) => event.type === 'tool.started' && event.data.callId === callId);
  return started?.seq ?? 0;
}

/** The path of the last workspace made for the agent, or null. */
export function lastWorkspacePath(prior: PriorAgent): string | null {
  const created = prior.events.findLast((event) => event.type === 'workspace.created');
  return created?.type === 'workspace.created' ? created.data.path : null;
}

/** Commits the agent's merges landed, as recorded, oldest first. */
export function landedCommits(prior: PriorAgent): string[] {
  return prior.events.flatMap((event) => (event.type === 'merge.landed' ? [event.data.commit] : []));
}

/** The prior agent to give `task` back to on resume, or null for a new agent. */
/** What `priorOf` reads of a run: its log, its id, and each task's agent from before the restart (task id → agent id). */
export interface PriorAgentsOfRun {
  readonly events: EventStore;
  readonly runId: string;
  readonly priorAgents?: ReadonlyMap<string, string> | undefined;
}

export function priorOf(context: PriorAgentsOfRun, task: TaskRecord): Promise<PriorAgent | null> {
  return loadPriorAgent(context.events, context.runId, context.priorAgents?.get(task.id));
}

/**
 * The handoff the agent's last life recorded (`handoff.submitted` after its last start or
 * restore), or null. An agent that ended this way only had its delivery cut off by the crash:
 * the recorded handoff is delivered as it is, and the agent is not brought back.
 */
export function recordedHandoff(prior: PriorAgent): Handoff | null {
  for (let index = prior.events.length - 1; index >= 0; index -= 1) {
    const event = prior.events[index];
    if (event === undefined || event.type === 'agent.started' || event.type === 'agent.restored') return null;
    if (event.type === 'handoff.submitted') return event.data.handoff;
  }
  return null;
}
