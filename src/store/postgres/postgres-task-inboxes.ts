import { isCurrentLease } from '../tasks/task-lease.js';
import { checkTime, messageFromRow } from '../tasks/task-rows.js';
import type { StoredInboxRow } from '../tasks/task-rows.js';
import type { InboxMessage, Lease, MessageSender } from '../tasks/task-store.js';
import { INBOX_COLUMNS, nextSeq, returnedRow, taskRowById } from './postgres-task-rows.js';
import type { TaskStoreContext } from './postgres-task-rows.js';

/** Leaves a message in a planner task's inbox, numbered as it commits. */
export async function sendMessage(
  context: TaskStoreContext,
  runId: string,
  recipientTaskId: string,
  text: string,
  now: number,
  sender: MessageSender,
): Promise<InboxMessage> {
  checkTime('sendMessage now', now);
  return context.connection.transaction(async (client) => {
    const recipient = await taskRowById(client, recipientTaskId);
    if (recipient === undefined || recipient.runId !== runId || recipient.kind !== 'planner') {
      throw new Error(`Task ${recipientTaskId} is not a planner task of run ${runId}, so it has no inbox to leave a message in.`);
    }
    const seq = await nextSeq(context, client, 'inbox');
    const { rows } = await client.query<StoredInboxRow>(
      `INSERT INTO inbox (seq, run_id, recipient_task_id, text, created_at, sender) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${INBOX_COLUMNS}`,
      [seq, runId, recipientTaskId, text, now, sender],
    );
    return messageFromRow(returnedRow(rows, `the message to task ${recipientTaskId}`), context.where);
  });
}

/**
 * Takes the recipient's unread messages in one transaction: their rows are locked as they are
 * read (another taker waits, then finds them taken), read back, and only then marked, so a
 * damaged one rolls everything back and no message is lost. With a lease, the recipient's row
 * is held from the check to the commit.
 */
export async function takeInbox(context: TaskStoreContext, recipientTaskId: string, lease: Lease | undefined): Promise<InboxMessage[]> {
  return context.connection.transaction(async (client) => {
    if (lease !== undefined) {
      const recipient = await taskRowById(client, recipientTaskId, 'FOR SHARE');
      if (recipient === undefined || !isCurrentLease(recipient, lease)) return [];
    }
    const { rows } = await client.query<StoredInboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM inbox WHERE recipient_task_id = $1 AND NOT taken ORDER BY seq FOR UPDATE`,
      [recipientTaskId],
    );
    const messages = rows.map((row) => messageFromRow(row, context.where));
    if (messages.length > 0) {
      await client.query('UPDATE inbox SET taken = true WHERE seq = ANY($1)', [messages.map((message) => message.seq)]);
    }
    return messages;
  });
}

/** The inbox messages `condition` picks (its parameters from `$1` on), oldest first. */
export async function messagesWhere(context: TaskStoreContext, condition: string, parameters: readonly (string | number)[]): Promise<InboxMessage[]> {
  const rows = await context.connection.read(async (client) => {
    const result = await client.query<StoredInboxRow>(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE ${condition} ORDER BY seq`, [...parameters]);
    return result.rows;
  });
  return rows.map((row) => messageFromRow(row, context.where));
}

export async function unreadCount(context: TaskStoreContext, recipientTaskId: string): Promise<number> {
  return context.connection.read(async (client) => {
    const { rows } = await client.query<{ count: number }>('SELECT COUNT(*) AS count FROM inbox WHERE recipient_task_id = $1 AND NOT taken', [recipientTaskId]);
    return rows[0]?.count ?? 0;
  });
}
