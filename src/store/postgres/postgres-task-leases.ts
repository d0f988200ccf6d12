import type { Handoff } from '../../events/handoff.js';
import { staleLeaseReason } from '../tasks/task-lease.js';
import { checkTime, handoffToJson, messageFromRow, taskFromRow } from '../tasks/task-rows.js';
import type { StoredInboxRow } from '../tasks/task-rows.js';
import type { ClaimRequest, CompleteResult, InboxMessage, Lease, TaskRecord } from '../tasks/task-store.js';
import { latestRunAndon } from './postgres-run-control.js';
import { INBOX_COLUMNS, TASK_COLUMNS, nextSeq, notifyTaskChange, returnedRow, taskRowById } from './postgres-task-rows.js';
import type { TaskRow, TaskStoreContext } from './postgres-task-rows.js';

/**
 * The oldest task of the run a claimer may take: open, or running with a lease that expired,
 * of one of the kinds, with no paused ancestor. `FOR UPDATE SKIP LOCKED` takes its row for the
 * claim's transaction and passes over rows another transaction holds (another claimer's
 * candidate, a task being completed), so concurrent claimers never wait on each other and
 * never get the same task.
 */
const CLAIM_CANDIDATE_SQL =
  "SELECT seq FROM tasks WHERE run_id = $1 AND paused_ancestors = 0 AND status IN ('open', 'running') " +
  "AND kind = ANY($2) AND (status = 'open' OR lease_expires_at < $3) ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED";

/**
 * Claims the oldest claimable task, in one transaction: the run's andon is read under the run
 * andons' lock taken shared (a change of the andon takes it alone, so none commits between
 * that read and the claim's commit), then the candidate's row is locked and leased.
 */
export async function claimTask(context: TaskStoreContext, request: ClaimRequest): Promise<TaskRecord | null> {
  checkTime('claim now', request.now);
  checkTime('claim leaseMs', request.leaseMs);
  const kinds = [...new Set(request.kinds)];
  if (kinds.length === 0) return null;
  return context.connection.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock_shared($1::bigint)', [context.connection.lockKey('run_andons seq')]);
    const andon = await latestRunAndon(client, request.runId);
    if (andon?.paused === true) return null;
    if (request.runAndonSeq !== undefined && (andon?.seq ?? 0) !== request.runAndonSeq) return null;
    const candidate = await client.query<{ seq: number }>(CLAIM_CANDIDATE_SQL, [request.runId, kinds, request.now]);
    const seq = candidate.rows[0]?.seq;
    if (seq === undefined) return null;
    const { rows } = await client.query<TaskRow>(
      "UPDATE tasks SET status = 'running', lease_holder = $1, lease_expires_at = $2, attempt = attempt + 1 " +
        `WHERE seq = $3 RETURNING ${TASK_COLUMNS}`,
      [request.holder, request.now + request.leaseMs, seq],
    );
    return taskFromRow(returnedRow(rows, `the claim of task ${seq}`), context.where);
  });
}

export async function renewLeases(context: TaskStoreContext, holder: string, now: number, leaseMs: number): Promise<number> {
  checkTime('renewLeases now', now);
  checkTime('renewLeases leaseMs', leaseMs);
  return context.connection.transaction(async (client) => {
    // GREATEST: a renewal only ever extends, even from a runner whose clock is behind.
    const result = await client.query("UPDATE tasks SET lease_expires_at = GREATEST(lease_expires_at, $1) WHERE status = 'running' AND lease_holder = $2", [
      now + leaseMs,
      holder,
    ]);
    return result.rowCount ?? 0;
  });
}

/** Gives a running task back, in one conditional UPDATE, when `lease` is current. */
export async function releaseTask(context: TaskStoreContext, taskId: string, lease: Lease): Promise<boolean> {
  return context.connection.transaction(async (client) => {
    const { rows } = await client.query<{ runId: string }>(
      "UPDATE tasks SET status = 'open', lease_holder = NULL, lease_expires_at = NULL " +
        "WHERE id = $1 AND status = 'running' AND lease_holder = $2 AND attempt = $3 RETURNING run_id AS \"runId\"",
      [taskId, lease.holder, lease.attempt],
    );
    const released = rows[0];
    if (released !== undefined) await notifyTaskChange(context, client, { runId: released.runId, change: 'released' });
    return released !== undefined;
  });
}

/**
 * Closes the task and delivers its handoff to the parent's inbox in one transaction, its row
 * locked from the lease check to the commit; the inbox's unique index on the sender keeps the
 * delivery to one whatever else happens.
 */
export async function completeTask(context: TaskStoreContext, taskId: string, lease: Lease, handoff: Handoff, now: number): Promise<CompleteResult> {
  checkTime('complete now', now);
  const handoffJson = handoffToJson(taskId, handoff);
  return context.connection.transaction(async (client): Promise<CompleteResult> => {
    const current = await taskRowById(client, taskId, 'FOR UPDATE');
    if (current === undefined) return { ok: false, error: `There is no task ${taskId}.` };
    const stale = staleLeaseReason(current, lease, `Task ${taskId}`, 'this handoff');
    if (stale !== null) return { ok: false, error: stale };
    const closed = await client.query<TaskRow>(
      `UPDATE tasks SET status = $1, closed_at = $2, handoff = $3, lease_expires_at = NULL WHERE seq = $4 RETURNING ${TASK_COLUMNS}`,
      [handoff.status, now, handoffJson, current.seq],
    );
    let delivered: InboxMessage | null = null;
    if (current.parentTaskId !== null) {
      const seq = await nextSeq(context, client, 'inbox');
      const message = await client.query<StoredInboxRow>(
        'INSERT INTO inbox (seq, run_id, recipient_task_id, from_task_id, handoff, created_at) VALUES ($1, $2, $3, $4, $5, $6) ' +
          `RETURNING ${INBOX_COLUMNS}`,
        [seq, current.runId, current.parentTaskId, taskId, handoffJson, now],
      );
      delivered = messageFromRow(returnedRow(message.rows, `the delivery of task ${taskId}'s handoff`), context.where);
    }
    return { ok: true, task: taskFromRow(returnedRow(closed.rows, `the close of task ${taskId}`), context.where), delivered };
  });
}

export async function releaseAbandoned(context: TaskStoreContext, runId: string, now: number): Promise<TaskRecord[]> {
  // The store keeps no time of release; `now` is checked like every time a caller passes.
  checkTime('releaseAbandoned now', now);
  return context.connection.transaction(async (client) => {
    const { rows } = await client.query<TaskRow>(
      "UPDATE tasks SET status = 'open', lease_holder = NULL, lease_expires_at = NULL " +
        `WHERE run_id = $1 AND status = 'running' RETURNING ${TASK_COLUMNS}`,
      [runId],
    );
    if (rows.length > 0) await notifyTaskChange(context, client, { runId, change: 'released' });
    // RETURNING follows no order: sort into creation order.
    return rows.sort((first, second) => first.seq - second.seq).map((row) => taskFromRow(row, context.where));
  });
}
