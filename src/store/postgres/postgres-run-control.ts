import type { RunAndonChange, RunRequest } from '../tasks/task-store.js';
import type { Queryable } from './postgres-connection.js';
import { nextSeq, notifyTaskChange, returnedRow, taskRowById } from './postgres-task-rows.js';
import type { TaskStoreContext } from './postgres-task-rows.js';
import { runRequestFromRow } from '../tasks/task-rows.js';
import type { RunRequestKind, StoredRunRequestRow } from '../tasks/task-rows.js';

const RUN_ANDON_COLUMNS = 'seq, run_id AS "runId", paused, reason, changed_at AS "changedAt"';
const RUN_REQUEST_COLUMNS = 'seq, run_id AS "runId", kind, task_id AS "taskId", workers, reason, requested_at AS "requestedAt"';


/** The run's latest andon change, or null when it has none. */
export async function latestRunAndon(client: Queryable, runId: string): Promise<RunAndonChange | null> {
  const { rows } = await client.query<RunAndonChange>(`SELECT ${RUN_ANDON_COLUMNS} FROM run_andons WHERE run_id = $1 ORDER BY seq DESC LIMIT 1`, [runId]);
  return rows[0] ?? null;
}

/**
 * Appends the change unless it changes nothing, holding the run andons' numbering lock: it is
 * the lock every claim takes shared, so no claim reads the andon while a change of it commits.
 */
export async function changeRunAndon(context: TaskStoreContext, runId: string, paused: boolean, reason: string, now: number): Promise<RunAndonChange | null> {
  return context.connection.transaction(async (client) => {
    const seq = await nextSeq(context, client, 'run_andons');
    const latest = await latestRunAndon(client, runId);
    const pausedNow = latest?.paused === true;
    if (!paused && !pausedNow) return null;
    if (paused && pausedNow && latest?.reason === reason) return null;
    const { rows } = await client.query<RunAndonChange>(
      `INSERT INTO run_andons (seq, run_id, paused, reason, changed_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${RUN_ANDON_COLUMNS}`,
      [seq, runId, paused, reason, now],
    );
    await notifyTaskChange(context, client, { runId, change: 'andon' });
    return returnedRow(rows, `the andon change of run ${runId}`);
  });
}

export async function runAndonChangesAfter(context: TaskStoreContext, runId: string, afterSeq: number): Promise<RunAndonChange[]> {
  return context.connection.read(async (client) => {
    const { rows } = await client.query<RunAndonChange>(`SELECT ${RUN_ANDON_COLUMNS} FROM run_andons WHERE run_id = $1 AND seq > $2 ORDER BY seq`, [runId, afterSeq]);
    return rows;
  });
}


/** Adds a request, numbered as it commits; a stop is refused unless its task is a task of the run. */
export async function addRunRequest(context: TaskStoreContext, runId: string, request: RunRequestKind, reason: string, now: number): Promise<RunRequest> {
  return context.connection.transaction(async (client) => {
    if (request.kind === 'stop') {
      const task = await taskRowById(client, request.taskId);
      if (task === undefined || task.runId !== runId) {
        throw new Error(`Task ${request.taskId} is not a task of run ${runId}, so there is no agent of it to stop.`);
      }
    }
    const seq = await nextSeq(context, client, 'run_requests');
    const { rows } = await client.query<StoredRunRequestRow>(
      `INSERT INTO run_requests (seq, run_id, kind, task_id, workers, reason, requested_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RUN_REQUEST_COLUMNS}`,
      [seq, runId, request.kind, request.kind === 'stop' ? request.taskId : null, request.kind === 'workers' ? request.workers : null, reason, now],
    );
    return runRequestFromRow(returnedRow(rows, `the ${request.kind} request of run ${runId}`), context.where);
  });
}

export async function runRequestsAfter(context: TaskStoreContext, runId: string, afterSeq: number): Promise<RunRequest[]> {
  return context.connection.read(async (client) => {
    const { rows } = await client.query<StoredRunRequestRow>(`SELECT ${RUN_REQUEST_COLUMNS} FROM run_requests WHERE run_id = $1 AND seq > $2 ORDER BY seq`, [runId, afterSeq]);
    return rows.map((row) => runRequestFromRow(row, context.where));
  });
}
