import type { StoredInboxRow, StoredTaskRow } from '../tasks/task-rows.js';

/** The columns of a task as the record names them; `handoff` still JSON text. */
export const TASK_COLUMNS =
  'seq, id, run_id AS runId, parent_task_id AS parentTaskId, created_by AS createdBy, kind, title, body, scope, ' +
  'retry_of AS retryOf, status, attempt, lease_holder AS leaseHolder, lease_expires_at AS leaseExpiresAt, ' +
  'created_at AS createdAt, closed_at AS closedAt, handoff, paused, paused_ancestors AS pausedAncestors, paths, acceptance';

/** The columns of an inbox message as the message names them; `handoff` still JSON text. */
export const INBOX_COLUMNS =
  'seq, run_id AS runId, recipient_task_id AS recipientTaskId, from_task_id AS fromTaskId, handoff, text, ' +
  'created_at AS createdAt, sender';

/** A task as it comes out of the table: the stored row and the andon columns. */
export type TaskRow = StoredTaskRow & {
  readonly paused: 0 | 1;
  readonly pausedAncestors: number;
};

/** An inbox message as it comes out of the table. */
export type InboxRow = StoredInboxRow;
