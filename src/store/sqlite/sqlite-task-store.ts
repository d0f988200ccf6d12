import type Database from 'better-sqlite3';
import type { Handoff } from '../../events/handoff.js';
import { openReadOnlyStoreConnection, openSqliteStoreConnection } from './sqlite-connection.js';
import { TASK_TABLE_SCHEMA } from './sqlite-task-schema.js';
import { INBOX_COLUMNS, TASK_COLUMNS } from './sqlite-task-rows.js';
import { acceptanceToJson, checkTime, handoffToJson, messageFromRow, pathsToJson, taskFromRow } from '../tasks/task-rows.js';
import type { InboxRow, TaskRow } from './sqlite-task-rows.js';
import { SqliteRunAndons } from './sqlite-run-andons.js';
import { SqliteRunRequests } from './sqlite-run-requests.js';
import { isCurrentLease, staleLeaseReason } from '../tasks/task-lease.js';
import type {
  ClaimRequest,
  CompleteResult,
  CreateTaskResult,
  InboxMessage,
  MessageSender,
  Lease,
  NewTask,
  RunAndonChange,
  RunRequest,
  TaskRecord,
  TaskStore,
} from '../tasks/task-store.js';

export interface SqliteTaskStoreOptions {
  /** How long a transaction waits for another connection's write lock before it fails (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * Only read: nothing is created or migrated and every change throws. Opening a file that
   * does not exist or holds no task table yet throws, saying so.
   */
  readonly readOnly?: boolean;
  /**
   * Whether each commit is synced to disk (`synchronous = FULL`, the default). `false` sets
   * `synchronous = OFF`, so a claim or delivery that returned can be lost when the machine
   * crashes. It exists only to measure what durability costs; colony never turns it off.
   */
  readonly durable?: boolean;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

function oldestClaimable(status: 'open' | 'running', kindParameter: string): string {
  const expired = status === 'running' ? 'AND lease_expires_at < :now ' : '';
  return (
    `SELECT seq FROM (SELECT seq FROM tasks WHERE run_id = :runId AND status = '${status}' ` +
    `AND kind = ${kindParameter} AND paused_ancestors = 0 ${expired}ORDER BY seq LIMIT 1)`
  );
}

/**
 * The oldest claimable task of a run: the smallest seq among the oldest open and the oldest
 * expired running task of each of (at most) two kinds. Each of the four parts is a seek in
 * `tasks_claimable` that stops at its first row (a running part walks the run's running tasks,
 * as many as there are agents, to the first expired lease), so a claim costs the same with ten
 * tasks or ten thousand. Exported so a test can check that plan.
 */
export const CLAIM_CANDIDATE_SQL =
  'SELECT MIN(seq) AS seq FROM (' +
  [
    oldestClaimable('open', ':firstKind'),
    oldestClaimable('open', ':secondKind'),
    oldestClaimable('running', ':firstKind'),
    oldestClaimable('running', ':secondKind'),
  ].join(' UNION ALL ') +
  ')';

/**
 * The task table and inboxes in a SQLite file (see TaskStore for the contract). Every change
 * that reads before it writes (create, claim, complete, take the inbox, set an andon) runs in
 * a `BEGIN IMMEDIATE` transaction: it takes the file's write lock before reading, so two
 * connections (in this process or any other) never act on the same snapshot, and the loser
 * waits up to the busy timeout for the winner to commit. That is what makes a claim atomic
 * across processes and a delivery happen once. Renewing and releasing are one conditional
 * UPDATE each, atomic on their own.
 */
class SqliteTaskStore implements TaskStore {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly inTransaction: <Result>(work: () => Result) => Result;
  private readonly andons = new SqliteRunAndons((sql) => this.statement(sql));
  private readonly requests: SqliteRunRequests;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly readOnly: boolean,
  ) {
    const run = db.transaction((work: () => unknown) => work());
    this.inTransaction = <Result>(work: () => Result) => run.immediate(work) as Result;
    this.requests = new SqliteRunRequests((sql) => this.statement(sql), path);
  }

  async createTask(task: NewTask, now: number, publisher?: Lease): Promise<CreateTaskResult> {
    this.checkWritable();
    checkTime('createTask now', now);
    const pathsJson = pathsToJson(task.id, task.paths);
    const acceptanceJson = acceptanceToJson(task.id, task.acceptance);
    if (publisher !== undefined && task.parentTaskId === null) {
      throw new TypeError(`Task ${task.id} is a root task: nobody publishes it, so it takes no publisher lease.`);
    }
    return this.inTransaction((): CreateTaskResult => {
      if (this.taskRow(task.id) !== undefined) {
        throw new Error(`A task with id ${task.id} already exists in ${this.path}; every task needs a new id.`);
      }
      let pausedAncestors = 0;
      if (task.parentTaskId !== null) {
        const parent = this.taskRow(task.parentTaskId);
        if (parent === undefined || parent.runId !== task.runId) {
          throw new Error(
            `Task ${task.id} names parent ${task.parentTaskId}, which is not a task of run ${task.runId}.`,
          );
        }
        if (publisher !== undefined) {
          const stale = staleLeaseReason(parent, publisher, `The planner of task ${parent.id}`, `this publish of task ${task.id}`);
          if (stale !== null) return { ok: false, error: stale };
        }
        pausedAncestors = parent.pausedAncestors + parent.paused;
      }
      const row = this.statement(
        'INSERT INTO tasks (id, run_id, parent_task_id, created_by, kind, title, body, scope, retry_of, paths, acceptance, ' +
          "status, attempt, created_at, paused_ancestors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', 0, ?, ?) " +
          `RETURNING ${TASK_COLUMNS}`,
      ).get(
        task.id,
        task.runId,
        task.parentTaskId,
        task.createdBy,
        task.kind,
        task.title,
        task.body,
        task.scope,
        task.retryOf,
        pathsJson,
        acceptanceJson,
        now,
        pausedAncestors,
      ) as TaskRow;
      return { ok: true, task: taskFromRow(row, this.path) };
    });
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    this.checkOpen();
    const row = this.taskRow(id);
    return row === undefined ? null : taskFromRow(row, this.path);
  }

  async listTasks(runId: string): Promise<TaskRecord[]> {
    this.checkOpen();
    const rows = this.statement(`SELECT ${TASK_COLUMNS} FROM tasks WHERE run_id = ? ORDER BY seq`).all(
      runId,
    ) as TaskRow[];
    return rows.map((row) => taskFromRow(row, this.path));
  }

  async listChildren(parentTaskId: string): Promise<TaskRecord[]> {
    this.checkOpen();
    const rows = this.statement(`SELECT ${TASK_COLUMNS} FROM tasks WHERE parent_task_id = ? ORDER BY seq`).all(
      parentTaskId,
    ) as TaskRow[];
    return rows.map((row) => taskFromRow(row, this.path));
  }

  async claim(request: ClaimRequest): Promise<TaskRecord | null> {
    this.checkWritable();
    checkTime('claim now', request.now);
    checkTime('claim leaseMs', request.leaseMs);
    const [firstKind, secondKind = firstKind] = [...new Set(request.kinds)];
    if (firstKind === undefined) return null;
    return this.inTransaction(() => {
      // The user's andon on the run stops every claim, read in the same transaction as the claim.
      const andon = this.andons.latest(request.runId);
      if (andon?.paused === true) return null;
      if (request.runAndonSeq !== undefined && (andon?.seq ?? 0) !== request.runAndonSeq) return null;
      const candidate = this.statement(CLAIM_CANDIDATE_SQL).get({
        runId: request.runId,
        firstKind,
        secondKind,
        now: request.now,
      }) as { seq: number | null };
      if (candidate.seq === null) return null;
      const row = this.statement(
        "UPDATE tasks SET status = 'running', lease_holder = ?, lease_expires_at = ?, attempt = attempt + 1 " +
          `WHERE seq = ? RETURNING ${TASK_COLUMNS}`,
      ).get(request.holder, request.now + request.leaseMs, candidate.seq) as TaskRow;
      return taskFromRow(row, this.path);
    });
  }

  async renewLeases(holder: string, now: number, leaseMs: number): Promise<number> {
    this.checkWritable();
    checkTime('renewLeases now', now);
    checkTime('renewLeases leaseMs', leaseMs);
    return this.statement(
      // max: a renewal only ever extends, even from a runner whose clock is behind.
      "UPDATE tasks SET lease_expires_at = max(lease_expires_at, ?) WHERE status = 'running' AND lease_holder = ?",
    ).run(now + leaseMs, holder).changes;
  }

  async release(taskId: string, lease: Lease): Promise<boolean> {
    this.checkWritable();
    const { changes } = this.statement(
      "UPDATE tasks SET status = 'open', lease_holder = NULL, lease_expires_at = NULL " +
        "WHERE id = ? AND status = 'running' AND lease_holder = ? AND attempt = ?",
    ).run(taskId, lease.holder, lease.attempt);
    return changes === 1;
  }

  async complete(taskId: string, lease: Lease, handoff: Handoff, now: number): Promise<CompleteResult> {
    this.checkWritable();
    checkTime('complete now', now);
    const handoffJson = handoffToJson(taskId, handoff);
    return this.inTransaction((): CompleteResult => {
      const current = this.taskRow(taskId);
      if (current === undefined) return { ok: false, error: `There is no task ${taskId}.` };
      const stale = staleLeaseReason(current, lease, `Task ${taskId}`, 'this handoff');
      if (stale !== null) return { ok: false, error: stale };
      const closed = this.statement(
        'UPDATE tasks SET status = ?, closed_at = ?, handoff = ?, lease_expires_at = NULL ' +
          `WHERE seq = ? RETURNING ${TASK_COLUMNS}`,
      ).get(handoff.status, now, handoffJson, current.seq) as TaskRow;
      let delivered: InboxMessage | null = null;
      if (current.parentTaskId !== null) {
        const message = this.statement(
          'INSERT INTO inbox (run_id, recipient_task_id, from_task_id, handoff, created_at) VALUES (?, ?, ?, ?, ?) ' +
            `RETURNING ${INBOX_COLUMNS}`,
        ).get(current.runId, current.parentTaskId, taskId, handoffJson, now) as InboxRow;
        delivered = messageFromRow(message, this.path);
      }
      return { ok: true, task: taskFromRow(closed, this.path), delivered };
    });
  }

  async releaseAbandoned(runId: string, now: number): Promise<TaskRecord[]> {
    this.checkWritable();
    // The store keeps no time of release; `now` is checked like every time a caller passes.
    checkTime('releaseAbandoned now', now);
    const rows = this.statement(
      "UPDATE tasks SET status = 'open', lease_holder = NULL, lease_expires_at = NULL " +
        `WHERE run_id = ? AND status = 'running' RETURNING ${TASK_COLUMNS}`,
    ).all(runId) as TaskRow[];
    // RETURNING follows no order: sort into creation order.
    return rows.sort((first, second) => first.seq - second.seq).map((row) => taskFromRow(row, this.path));
  }

  async sendMessage(runId: string, recipientTaskId: string, text: string, now: number, sender: MessageSender = 'person'): Promise<InboxMessage> {
    this.checkWritable();
    checkTime('sendMessage now', now);
    const recipient = this.taskRow(recipientTaskId);
    if (recipient === undefined || recipient.runId !== runId || recipient.kind !== 'planner') {
      throw new Error(
        `Task ${recipientTaskId} is not a planner task of run ${runId}, so it has no inbox to leave a message in.`,
      );
    }
    const row = this.statement(
      `INSERT INTO inbox (run_id, recipient_task_id, text, created_at, sender) VALUES (?, ?, ?, ?, ?) RETURNING ${INBOX_COLUMNS}`,
    ).get(runId, recipientTaskId, text, now, sender) as InboxRow;
    return messageFromRow(row, this.path);
  }

  async takeInbox(recipientTaskId: string, lease?: Lease): Promise<InboxMessage[]> {
    this.checkWritable();
    return this.inTransaction(() => {
      if (lease !== undefined) {
        const recipient = this.taskRow(recipientTaskId);
        if (recipient === undefined || !isCurrentLease(recipient, lease)) return [];
      }
      const rows = this.statement(
        `SELECT ${INBOX_COLUMNS} FROM inbox WHERE recipient_task_id = ? AND taken = 0 ORDER BY seq`,
      ).all(recipientTaskId) as InboxRow[];
      // Read before marking: a damaged row throws here and rolls back, so no message is lost.
      const messages = rows.map((row) => messageFromRow(row, this.path));
      if (messages.length > 0) {
        this.statement('UPDATE inbox SET taken = 1 WHERE recipient_task_id = ? AND taken = 0').run(recipientTaskId);
      }
      return messages;
    });
  }

  async takenInbox(recipientTaskId: string): Promise<InboxMessage[]> {
    this.checkOpen();
    const rows = this.statement(
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE recipient_task_id = ? AND taken = 1 ORDER BY seq`,
    ).all(recipientTaskId) as InboxRow[];
    return rows.map((row) => messageFromRow(row, this.path));
  }

  async unreadCount(recipientTaskId: string): Promise<number> {
    this.checkOpen();
    const row = this.statement('SELECT COUNT(*) AS count FROM inbox WHERE recipient_task_id = ? AND taken = 0').get(
      recipientTaskId,
    ) as { count: number };
    return row.count;
  }

  async openChildren(parentTaskId: string): Promise<number> {
    this.checkOpen();
    const row = this.statement(
      "SELECT COUNT(*) AS count FROM tasks WHERE parent_task_id = ? AND status IN ('open', 'running')",
    ).get(parentTaskId) as { count: number };
    return row.count;
  }

  async movableChildren(parentTaskId: string): Promise<number> {
    this.checkOpen();
    const row = this.statement(
      "SELECT COUNT(*) AS count FROM tasks WHERE parent_task_id = ? AND (status = 'running' OR (status = 'open' AND paused_ancestors = 0))",
    ).get(parentTaskId) as { count: number };
    return row.count;
  }

  async setAndon(taskId: string, paused: boolean, now: number, lease?: Lease): Promise<boolean> {
    this.checkWritable();
    checkTime('setAndon now', now);
    return this.inTransaction(() => {
      const task = this.taskRow(taskId);
      if (task === undefined) throw new Error(`There is no task ${taskId} to set the andon of.`);
      if (lease !== undefined && !isCurrentLease(task, lease)) return false;
      // Pausing a paused task changes nothing: the andon is a switch, not a counter.
      if (task.paused === (paused ? 1 : 0)) return true;
      const switchAndon = this.statement('UPDATE tasks SET paused = ?, andon_changed_at = ? WHERE seq = ?');
      switchAndon.run(paused ? 1 : 0, now, task.seq);
      // Every task below counts this one among its paused ancestors, or stops counting it.
      this.statement(
        'WITH RECURSIVE below (id) AS (SELECT id FROM tasks WHERE parent_task_id = :taskId ' +
          'UNION ALL SELECT child.id FROM tasks AS child JOIN below ON child.parent_task_id = below.id) ' +
          'UPDATE tasks SET paused_ancestors = paused_ancestors + :change WHERE id IN below',
      ).run({ taskId, change: paused ? 1 : -1 });
      return true;
    });
  }

  async pausedTasks(runId: string): Promise<string[]> {
    this.checkOpen();
    return this.statement('SELECT id FROM tasks WHERE run_id = ? AND paused = 1 ORDER BY seq')
      .pluck()
      .all(runId) as string[];
  }

  async setRunAndon(runId: string, paused: boolean, reason: string, now: number): Promise<RunAndonChange | null> {
    this.checkWritable();
    checkTime('setRunAndon now', now);
    return this.inTransaction(() => this.andons.change(runId, paused, reason, now));
  }

  async runAndon(runId: string): Promise<RunAndonChange | null> {
    this.checkOpen();
    const latest = this.andons.latest(runId);
    return latest?.paused === true ? latest : null;
  }

  async runAndonChanges(runId: string, afterSeq: number): Promise<RunAndonChange[]> {
    this.checkOpen();
    return this.andons.after(runId, afterSeq);
  }

  async requestWorkers(runId: string, workers: number, reason: string, now: number): Promise<RunRequest> {
    this.checkWritable();
    checkTime('requestWorkers now', now);
    if (!Number.isSafeInteger(workers) || workers < 1) throw new TypeError(`requestWorkers workers must be a positive whole number, got ${String(workers)}.`);
    return this.requests.add(runId, { kind: 'workers', workers }, reason, now);
  }

  async requestStop(runId: string, taskId: string, reason: string, now: number): Promise<RunRequest> {
    this.checkWritable();
    checkTime('requestStop now', now);
    return this.inTransaction(() => {
      const task = this.taskRow(taskId);
      if (task === undefined || task.runId !== runId) throw new Error(`Task ${taskId} is not a task of run ${runId}, so there is no agent of it to stop.`);
      return this.requests.add(runId, { kind: 'stop', taskId }, reason, now);
    });
  }

  async requestGreen(runId: string, reason: string, now: number): Promise<RunRequest> {
    this.checkWritable();
    checkTime('requestGreen now', now);
    return this.requests.add(runId, { kind: 'green' }, reason, now);
  }

  async runRequests(runId: string, afterSeq: number): Promise<RunRequest[]> {
    this.checkOpen();
    return this.requests.after(runId, afterSeq);
  }

  async personMessages(runId: string, afterSeq: number): Promise<InboxMessage[]> {
    this.checkOpen();
    const rows = this.statement(
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? AND from_task_id IS NULL AND (sender IS NULL OR sender = 'person') AND seq > ? ORDER BY seq`,
    ).all(runId, afterSeq) as InboxRow[];
    return rows.map((row) => messageFromRow(row, this.path));
  }

  async deliveredHandoffs(runId: string): Promise<InboxMessage[]> {
    this.checkOpen();
    const rows = this.statement(
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? AND from_task_id IS NOT NULL ORDER BY seq`,
    ).all(runId) as InboxRow[];
    return rows.map((row) => messageFromRow(row, this.path));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.db.close();
    this.closed = true;
  }

  private taskRow(id: string): TaskRow | undefined {
    return this.statement(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`).get(id) as TaskRow | undefined;
  }

  /** Each statement is prepared once and reused. */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`The task store for ${this.path} is closed; open it again to keep using it.`);
  }

  private checkWritable(): void {
    this.checkOpen();
    if (this.readOnly) {
      throw new Error(`The task store for ${this.path} was opened read-only; open it without readOnly to change it.`);
    }
  }
}

/**
 * Opens (creating it and its folder when missing) the task table, inboxes and run andons in the SQLite
 * file at `path`, which may be the event log's file: the two are separate schema parts, each
 * used through its own connection. WAL mode, `synchronous = FULL` (a returned claim or
 * delivery is on disk), the busy timeout (default 5000 ms). Throws with what to do when the
 * file is not SQLite, belongs to another program or was written by a newer colony.
 *
 * With `readOnly`, nothing is created or migrated: a missing file, or a file without the task
 * table (an event log no run has put tasks in yet), is an error that says so, rather than an
 * empty view that would hide a wrong path.
 */
export function openSqliteTaskStore(path: string, options: SqliteTaskStoreOptions = {}): TaskStore {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const readOnly = options.readOnly ?? false;
  const db = readOnly
    ? openReadOnlyStoreConnection(path, busyTimeoutMs, TASK_TABLE_SCHEMA, 'task table')
    : openSqliteStoreConnection(path, busyTimeoutMs, TASK_TABLE_SCHEMA, 'task table', options.durable ?? true);
  return new SqliteTaskStore(db, path, readOnly);
}
