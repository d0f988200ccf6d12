import type Database from 'better-sqlite3';
import type { RunRequest } from '../tasks/task-store.js';

const RUN_REQUEST_COLUMNS = 'seq, run_id AS runId, kind, task_id AS taskId, workers, reason, requested_at AS requestedAt';

interface RunRequestRow {
  readonly seq: number;
  readonly runId: string;
  readonly kind: string;
  readonly taskId: string | null;
  readonly workers: number | null;
  readonly reason: string;
  readonly requestedAt: number;
}

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
    request: { readonly kind: 'workers'; readonly workers: number } | { readonly kind: 'stop'; readonly taskId: string } | { readonly kind: 'green' },
    reason: string,
    now: number,
  ): RunRequest {
    const row = this.statement(
      `INSERT INTO run_requests (run_id, kind, task_id, workers, reason, requested_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${RUN_REQUEST_COLUMNS}`,
    ).get(runId, request.kind, request.kind === 'stop' ? request.taskId : null, request.kind === 'workers' ? request.workers : null, reason, now) as RunRequestRow;
    return this.fromRow(row);
  }

  after(runId: string, afterSeq: number): RunRequest[] {
    const rows = this.statement(`SELECT ${RUN_REQUEST_COLUMNS} FROM run_requests WHERE run_id = ? AND seq > ? ORDER BY seq`).all(runId, afterSeq) as RunRequestRow[];
    return rows.map((row) => this.fromRow(row));
  }

  private fromRow(row: RunRequestRow): RunRequest {
    const common = { seq: row.seq, runId: row.runId, reason: row.reason, requestedAt: row.requestedAt };
    if (row.kind === 'workers' && row.workers !== null) return { ...common, kind: 'workers', workers: row.workers };
    if (row.kind === 'stop' && row.taskId !== null) return { ...common, kind: 'stop', taskId: row.taskId };
    if (row.kind === 'green') return { ...common, kind: 'green' };
    throw new Error(`The run request ${row.seq} in ${this.path} is damaged: a ${row.kind} request without its value.`);
  }
}
