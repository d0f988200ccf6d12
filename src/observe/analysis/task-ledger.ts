import type { EventData } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { AgentIdentity } from './agent-silences.js';
import type { CrashedTask } from './types.js';
import type { EventOf } from '../event-of.js';
import { headOf } from '../text-keys.js';

/** Reasons kept per task, and the characters kept of each: enough to say why, bounded however often it failed. */
const REASONS_PER_TASK = 6;
const REASON_CHARS = 400;

/** What the analysis knows of one task; one record per task, never per event. */
export interface TaskEntry {
  readonly id: string;
  title: string;
  kind: string | null;
  parentTaskId: string | null;
  retryOf: string | null;
  createdAt: number | null;
  /** Order of first mention, so ties rank the way the run went. */
  readonly order: number;
  /** The highest `task.claimed.attempt` seen. */
  claimAttempt: number;
  /** Agents that started on it (a restored agent counts once). */
  agents: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  firstLandedAt: number | null;
  reasons: string[];
  crash: CrashedTask | null;
  /** Its delivered handoff's status; null while it is open. */
  outcome: string | null;
}

export interface RoleTotals {
  agents: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number;
}

/** How sure each way of telling a crash is: a later, surer word replaces an earlier one. */
const CRASH_RANK: Readonly<Record<CrashedTask['how'], number>> = { 'synthetic-handoff': 1, 'agent-failed': 2, hung: 3 };

/**
 * The run's tasks and agents as the log tells them: the tree, who ran what, what each spent,
 * when its work first landed and why it failed. The raw material of the retry, crash, cost and
 * landing sections (see task-report.ts).
 */
export class TaskLedger {
  readonly tasks = new Map<string, TaskEntry>();
  readonly agents = new Map<string, AgentIdentity>();
  readonly roles: Record<AgentRole, RoleTotals> = { 'root-planner': emptyRole(), 'sub-planner': emptyRole(), worker: emptyRole() };
  costKnown = true;

  taskCreated(event: EventOf<'task.created'>): void {
    const { taskId, parentTaskId, kind, title, retryOf } = event.data;
    const task = this.task(taskId, title);
    Object.assign(task, { title, kind, parentTaskId, retryOf, createdAt: task.createdAt ?? event.ts });
  }

  taskClaimed(event: EventOf<'task.claimed'>): void {
    const task = this.task(event.data.taskId, event.data.taskId);
    task.claimAttempt = Math.max(task.claimAttempt, event.data.attempt);
  }

  agentStarted(event: EventOf<'agent.started'>): void {
    if (this.agents.has(event.agentId)) return;
    const { role, taskId, title } = event.data;
    this.agents.set(event.agentId, { role, taskId });
    this.roles[role].agents += 1;
    this.task(taskId, title).agents += 1;
  }

  /** A model call's usage, counted toward the agent's task and role: `model.responded` and `context.compacted` alike. */
  spent(agentId: string, usage: EventData<'model.responded'>['usage'], costUsd: number | null): void {
    if (costUsd === null) this.costKnown = false;
    const identity = this.agents.get(agentId);
    if (identity === undefined) return;
    const role = this.roles[identity.role];
    role.inputTokens += usage.inputTokens;
    role.outputTokens += usage.outputTokens;
    role.cachedInputTokens += usage.cachedInputTokens;
    role.costUsd += costUsd ?? 0;
    const task = this.tasks.get(identity.taskId);
    if (task === undefined) return;
    task.inputTokens += usage.inputTokens;
    task.outputTokens += usage.outputTokens;
    task.costUsd += costUsd ?? 0;
  }

  landed(event: EventOf<'merge.landed'>): void {
    const task = this.taskOf(event.agentId);
    if (task !== undefined && task.firstLandedAt === null) task.firstLandedAt = event.ts;
  }

  handoffSubmitted(event: EventOf<'handoff.submitted'>): void {
    const { handoff } = event.data;
    if (handoff.status === 'done') return;
    const task = this.task(event.data.taskId, event.data.taskId);
    const concerns = handoff.concerns.length === 0 ? '' : ` Concerns: ${handoff.concerns.join(' ')}`;
    addReason(task, `${handoff.status}: ${handoff.summary}${concerns}`);
    if (handoff.synthetic && handoff.status === 'failed') this.crashed(task, event.agentId, 'synthetic-handoff', handoff.summary, event.ts);
  }

  handoffDelivered(event: EventOf<'handoff.delivered'>): void {
    this.task(event.data.taskId, event.data.taskId).outcome = event.data.status;
  }

  agentFailed(event: EventOf<'agent.failed'>): void {
    const task = this.taskOf(event.agentId);
    if (task === undefined) return;
    addReason(task, event.data.reason);
    this.crashed(task, event.agentId, 'agent-failed', event.data.reason, event.ts);
  }

  /**
   * The run stopped and gave the task back (it goes on after `colony resume`): its agent's
   * failure in that moment was the stop, not a crash.
   */
  taskReleased(event: EventOf<'task.released'>): void {
    const task = this.tasks.get(event.data.taskId);
    if (task?.crash?.how === 'agent-failed') task.crash = null;
  }

  agentHung(event: EventOf<'agent.hung'>): void {
    const { taskId, hungAgentId, silentMs, limitMs } = event.data;
    const task = this.task(taskId, taskId);
    const reason = `hung: recorded nothing for ${Math.round(silentMs / 1000)}s (the limit is ${Math.round(limitMs / 1000)}s)`;
    addReason(task, reason);
    this.crashed(task, hungAgentId, 'hung', reason, event.ts);
  }

  private crashed(task: TaskEntry, agentId: string, how: CrashedTask['how'], reason: string, at: number): void {
    if (task.crash !== null && CRASH_RANK[task.crash.how] >= CRASH_RANK[how]) return;
    const role = this.agents.get(agentId)?.role ?? null;
    task.crash = { taskId: task.id, title: task.title, agentId, role, how, reason: headOf(reason, REASON_CHARS), at: task.crash?.at ?? at };
  }

  private taskOf(agentId: string): TaskEntry | undefined {
    const identity = this.agents.get(agentId);
    return identity === undefined ? undefined : this.tasks.get(identity.taskId);
  }

  /** The task's record, made on first mention: an agent or a claim can name a task whose creation the log does not hold. */
  private task(id: string, title: string): TaskEntry {
    let task = this.tasks.get(id);
    if (task === undefined) {
      task = {
        id,
        title,
        kind: null,
        parentTaskId: null,
        retryOf: null,
        createdAt: null,
        order: this.tasks.size,
        claimAttempt: 0,
        agents: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        firstLandedAt: null,
        reasons: [],
        crash: null,
        outcome: null,
      };
      this.tasks.set(id, task);
    }
    return task;
  }
}

function emptyRole(): RoleTotals {
  return { agents: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
}

/**
 * Keeps a reason unless one already kept says it: a synthetic handoff repeats its agent's
 * failure reason, and the shorter, rooted one is the one worth reading.
 */
function addReason(task: TaskEntry, text: string): void {
  const reason = headOf(text.replace(/\s+/g, ' ').trim(), REASON_CHARS);
  const wider = task.reasons.findIndex((kept) => kept.includes(reason));
  if (wider !== -1) {
    task.reasons[wider] = reason;
    return;
  }
  if (task.reasons.some((kept) => reason.includes(kept))) return;
  if (task.reasons.length < REASONS_PER_TASK) task.reasons.push(reason);
}
