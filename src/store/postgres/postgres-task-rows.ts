import type { StoredTaskRow } from '../tasks/task-rows.js';
import type { PostgresConnection, Queryable } from './postgres-connection.js';

/** The columns of a task as the record names them; `handoff`, `paths` and `acceptance` still JSON text. */
export const TASK_COLUMNS =
  'seq, id, run_id AS "runId", parent_task_id AS "parentTaskId", created_by AS "createdBy", kind, title, body, scope, ' +
  'retry_of AS "retryOf", status, attempt, lease_holder AS "leaseHolder", lease_expires_at AS "leaseExpiresAt", ' +
  'created_at AS "createdAt", closed_at AS "closedAt", handoff, paused, paused_ancestors AS "pausedAncestors", paths, acceptance';

/** The columns of an inbox message as the message names them; `handoff` still JSON text. */
export const INBOX_COLUMNS =
  'seq, run_id AS "runId", recipient_task_id AS "recipientTaskId", from_task_id AS "fromTaskId", handoff, text, ' +
  'created_at AS "createdAt", sender';

/** A task as it comes out of the table: the stored row and the andon columns. */
export type TaskRow = StoredTaskRow & { readonly paused: boolean; readonly pausedAncestors: number };

/** What wakes a runner early (`onTaskChange`): a task of the run was published, given back, or an andon moved. */
export interface TaskChange {
  readonly runId: string;
  readonly change: 'created' | 'released' | 'andon';
}

/** The tables whose seqs are given in commit order, each under an advisory lock of its own. */
export type NumberedTable = 'inbox' | 'run_andons' | 'run_requests';

/** What the parts of the PostgreSQL task store share. */
export interface TaskStoreContext {
  readonly connection: PostgresConnection;
  /** The store as damaged rows and refusals name it: the database, never the password. */
  readonly where: string;
  /** The channel task changes are notified on, one per schema. */
  readonly channel: string;
}

/** The task with `id`, or undefined; `lock` takes its row for the rest of the transaction. */
export async function taskRowById(client: Queryable, id: string, lock: '' | 'FOR UPDATE' | 'FOR SHARE' = ''): Promise<TaskRow | undefined> {
  const { rows } = await client.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 ${lock}`, [id]);
  return rows[0];
}

/**
 * Takes `table`'s numbering lock until the transaction ends and returns the seq the next row
 * gets: rows are numbered as they commit, so a reader going on from a seq misses none.
 */
export async function nextSeq(context: TaskStoreContext, client: Queryable, table: NumberedTable): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [context.connection.lockKey(`${table} seq`)]);
  const { rows } = await client.query<{ seq: number | null }>(`SELECT MAX(seq) AS seq FROM ${table}`);
  return (rows[0]?.seq ?? 0) + 1;
}

/** Tells listeners, once the transaction commits, that a task of `runId` changed (`onTaskChange`). */
export async function notifyTaskChange(context: TaskStoreContext, client: Queryable, change: TaskChange): Promise<void> {
  await client.query('SELECT pg_notify($1, $2)', [context.channel, JSON.stringify(change)]);
}

/**
 * Takes the run's tree lock until the transaction ends: publishing a task reads its parent's
 * andons and switching an andon walks the tasks below, so the two must not overlap in one run
 * (a task published during a walk could miss the andon above it).
 */
export async function lockRunTree(context: TaskStoreContext, client: Queryable, runId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [context.connection.lockKey(`tree ${runId}`)]);
}

/** The one row a statement with RETURNING gave back; `what` names it should the statement have matched none. */
export function returnedRow<Row>(rows: readonly Row[], what: string): Row {
  const row = rows[0];
  if (row === undefined) throw new Error(`PostgreSQL returned no row for ${what}.`);
  return row;
}
