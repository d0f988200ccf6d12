import type Database from 'better-sqlite3';
import type { RunRequest } from '../tasks/task-store.js';
import { runRequestFromRow } from '../tasks/task-rows.js';
import type { RunRequestKind, StoredRunRequestRow } from '../tasks/task-rows.js';

const RUN_REQUEST_COLUMNS = 'seq, run_id AS runId, kind, task_id AS taskId, workers, reason, requested_at AS requestedAt';


/**
 * People's requests of running runs in the `run_requests` table (see `TASK_TABLE_SCHEMA`), for
 * the SQLite task store: one row per request, only ever added. The table's checks keep each
 * kind's own column set, so a row reads back as the request that was made.
 */
export class SqliteRunRequests {
  constructor(
    private readonly statement: (sql: string) => Database.Statement,
    private readonly path: string,
  ) {}

  add(
    runId: string,
    request: RunRequestKind,
    reason: string,
    now: number,
  ): RunRequest {
    const row = this.statement(
      `INSERT INTO run_requests (run_id, kind, task_id, workers, reason, requested_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${RUN_REQUEST_COLUMNS}`,
    ).get(runId, request.kind, request.kind === 'stop' ? request.taskId : null, request.kind === 'workers' ? request.workers : null, reason, now) as StoredRunRequestRow;
    return runRequestFromRow(row, this.path);
  }

  after(runId: string, afterSeq: number): RunRequest[] {
    const rows = this.statement(`SELECT ${RUN_REQUEST_COLUMNS} FROM run_requests WHERE run_id = ? AND seq > ? ORDER BY seq`).all(runId, afterSeq) as StoredRunRequestRow[];
    return rows.map((row) => runRequestFromRow(row, this.path));
  }

}
