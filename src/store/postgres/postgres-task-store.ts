import type { Handoff } from '../../events/handoff.js';
import { checkTime } from '../tasks/task-rows.js';
import type {
  ClaimRequest,
  CompleteResult,
  CreateTaskResult,
  InboxMessage,
  Lease,
  MessageSender,
  NewTask,
  RunAndonChange,
  RunRequest,
  TaskRecord,
  TaskStore,
} from '../tasks/task-store.js';
import type { PostgresConnection } from './postgres-connection.js';
import { addRunRequest, changeRunAndon, latestRunAndon, runAndonChangesAfter, runRequestsAfter } from './postgres-run-control.js';
import { messagesWhere, sendMessage, takeInbox, unreadCount } from './postgres-task-inboxes.js';
import { claimTask, completeTask, releaseAbandoned, releaseTask, renewLeases } from './postgres-task-leases.js';
import { TaskChangeListener } from './postgres-task-listener.js';
import type { TaskChange, TaskStoreContext } from './postgres-task-rows.js';
import { countChildren, createTask, getTask, pausedTasks, setAndon, tasksWhere } from './postgres-task-tree.js';

/** The PostgreSQL task store: the `TaskStore` contract, and a way to hear of changes before the next poll. */
export interface PostgresTaskStore extends TaskStore {
  /**
   * Calls `listener` whenever a task is published or given back, or an andon (a task's or a
   * run's) changes, in any process using the store, once that change has committed: a runner
   * waiting to claim can look again at once rather than at its next poll. A hint only: changes
   * can go unheard while the connection is down, so the poll stays. Resolves, with a function
   * that stops listening, once the store listens.
   */
  onTaskChange(listener: (change: TaskChange) => void): Promise<() => void>;
}

/**
 * The task table, inboxes, run andons and requests in PostgreSQL (see `TaskStore` for the
 * contract, and the parts for how each holds it across processes: claims take their task with
 * SKIP LOCKED, fenced writes hold the task's row from the lease check to the commit, rows read
 * from a seq on are numbered as they commit).
 */
class PostgresTaskTable implements PostgresTaskStore {
  private readonly context: TaskStoreContext;
  private readonly listener: TaskChangeListener;
  private closed = false;

  constructor(private readonly connection: PostgresConnection) {
    const channel = `colony_tasks_${connection.schema}`.slice(0, 63);
    this.context = { connection, where: connection.describe(), channel };
    this.listener = new TaskChangeListener(connection, channel);
  }

  async createTask(task: NewTask, now: number, publisher?: Lease): Promise<CreateTaskResult> {
    return createTask(this.open(), task, now, publisher);
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return getTask(this.open(), id);
  }

  async listTasks(runId: string): Promise<TaskRecord[]> {
    return tasksWhere(this.open(), 'run_id', runId);
  }

  async listChildren(parentTaskId: string): Promise<TaskRecord[]> {
    return tasksWhere(this.open(), 'parent_task_id', parentTaskId);
  }

  async claim(request: ClaimRequest): Promise<TaskRecord | null> {
    return claimTask(this.open(), request);
  }

  async renewLeases(holder: string, now: number, leaseMs: number): Promise<number> {
    return renewLeases(this.open(), holder, now, leaseMs);
  }

  async release(taskId: string, lease: Lease): Promise<boolean> {
    return releaseTask(this.open(), taskId, lease);
  }

  async complete(taskId: string, lease: Lease, handoff: Handoff, now: number): Promise<CompleteResult> {
    return completeTask(this.open(), taskId, lease, handoff, now);
  }

  async releaseAbandoned(runId: string, now: number): Promise<TaskRecord[]> {
    return releaseAbandoned(this.open(), runId, now);
  }

  async openChildren(parentTaskId: string): Promise<number> {
    return countChildren(this.open(), parentTaskId, false);
  }

  async movableChildren(parentTaskId: string): Promise<number> {
    return countChildren(this.open(), parentTaskId, true);
  }

  async setAndon(taskId: string, paused: boolean, now: number, lease?: Lease): Promise<boolean> {
    return setAndon(this.open(), taskId, paused, now, lease);
  }

  async pausedTasks(runId: string): Promise<string[]> {
    return pausedTasks(this.open(), runId);
  }

  async sendMessage(runId: string, recipientTaskId: string, text: string, now: number, sender: MessageSender = 'person'): Promise<InboxMessage> {
    return sendMessage(this.open(), runId, recipientTaskId, text, now, sender);
  }

  async takeInbox(recipientTaskId: string, lease?: Lease): Promise<InboxMessage[]> {
    return takeInbox(this.open(), recipientTaskId, lease);
  }

  async takenInbox(recipientTaskId: string): Promise<InboxMessage[]> {
    return messagesWhere(this.open(), 'recipient_task_id = $1 AND taken', [recipientTaskId]);
  }

  async unreadCount(recipientTaskId: string): Promise<number> {
    return unreadCount(this.open(), recipientTaskId);
  }

  async deliveredHandoffs(runId: string): Promise<InboxMessage[]> {
    return messagesWhere(this.open(), 'run_id = $1 AND from_task_id IS NOT NULL', [runId]);
  }

  async personMessages(runId: string, afterSeq: number): Promise<InboxMessage[]> {
    return messagesWhere(this.open(), "run_id = $1 AND from_task_id IS NULL AND (sender IS NULL OR sender = 'person') AND seq > $2", [runId, afterSeq]);
  }

  async setRunAndon(runId: string, paused: boolean, reason: string, now: number): Promise<RunAndonChange | null> {
    checkTime('setRunAndon now', now);
    return changeRunAndon(this.open(), runId, paused, reason, now);
  }

  async runAndon(runId: string): Promise<RunAndonChange | null> {
    const latest = await this.open().connection.read((client) => latestRunAndon(client, runId));
    return latest?.paused === true ? latest : null;
  }

  async runAndonChanges(runId: string, afterSeq: number): Promise<RunAndonChange[]> {
    return runAndonChangesAfter(this.open(), runId, afterSeq);
  }

  async requestWorkers(runId: string, workers: number, reason: string, now: number): Promise<RunRequest> {
    checkTime('requestWorkers now', now);
    if (!Number.isSafeInteger(workers) || workers < 1) throw new TypeError(`requestWorkers workers must be a positive whole number, got ${String(workers)}.`);
    return addRunRequest(this.open(), runId, { kind: 'workers', workers }, reason, now);
  }

  async requestStop(runId: string, taskId: string, reason: string, now: number): Promise<RunRequest> {
    checkTime('requestStop now', now);
    return addRunRequest(this.open(), runId, { kind: 'stop', taskId }, reason, now);
  }

  async requestGreen(runId: string, reason: string, now: number): Promise<RunRequest> {
    checkTime('requestGreen now', now);
    return addRunRequest(this.open(), runId, { kind: 'green' }, reason, now);
  }

  async runRequests(runId: string, afterSeq: number): Promise<RunRequest[]> {
    return runRequestsAfter(this.open(), runId, afterSeq);
  }

  async onTaskChange(listener: (change: TaskChange) => void): Promise<() => void> {
    return this.listener.subscribe(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listener.close();
    await this.connection.release();
  }

  /** The context for the parts, once it is clear the store is still open. */
  private open(): TaskStoreContext {
    if (this.closed) throw new Error(`The task store for ${this.context.where} is closed; open it again to keep using it.`);
    return this.context;
  }
}

/** The task store on `connection`; the connection is retained and released when the store closes. */
export function openPostgresTaskTable(connection: PostgresConnection): PostgresTaskStore {
  connection.retain();
  return new PostgresTaskTable(connection);
}
