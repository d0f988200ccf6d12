import type Database from 'better-sqlite3';
import type { RunAndonChange } from '../tasks/task-store.js';

const RUN_ANDON_COLUMNS = 'seq, run_id AS runId, held, reason, changed_at AS changedAt';

type RunAndonRow = Omit<RunAndonChange, 'paused'> & { readonly held: 0 | 1 };

function changeFromRow(row: RunAndonRow): RunAndonChange {
  return { seq: row.seq, runId: row.runId, paused: row.held === 1, reason: row.reason, changedAt: row.changedAt };
}

/**
 * The user's andons on whole runs in the `run_holds` table (see `TASK_TABLE_SCHEMA`, whose
 * table and `held` column kept the names they were made with), for the SQLite task store: one row
 * per change, a run paused while its latest row says so. Callers run `change` inside their
 * write transaction, and read `latest` in the claim's.
 */
export class SqliteRunAndons {
  constructor(private readonly statement: (sql: string) => Database.Statement) {}

  latest(runId: string): RunAndonChange | null {
    const row = this.statement(`SELECT ${RUN_ANDON_COLUMNS} FROM run_holds WHERE run_id = ? ORDER BY seq DESC LIMIT 1`).get(runId) as
      | RunAndonRow
      | undefined;
    return row === undefined ? null : changeFromRow(row);
  }

  /** Appends the change unless it changes nothing; the caller holds the write transaction. */
  change(runId: string, paused: boolean, reason: string, now: number): RunAndonChange | null {
    const latest = this.latest(runId);
    const pausedNow = latest?.paused === true;
    if (!paused && !pausedNow) return null;
    if (paused && pausedNow && latest?.reason === reason) return null;
    const row = this.statement(
      `INSERT INTO run_holds (run_id, held, reason, changed_at) VALUES (?, ?, ?, ?) RETURNING ${RUN_ANDON_COLUMNS}`,
    ).get(runId, paused ? 1 : 0, reason, now) as RunAndonRow;
    return changeFromRow(row);
  }

  after(runId: string, afterSeq: number): RunAndonChange[] {
    const rows = this.statement(`SELECT ${RUN_ANDON_COLUMNS} FROM run_holds WHERE run_id = ? AND seq > ? ORDER BY seq`).all(
      runId,
      afterSeq,
    ) as RunAndonRow[];
    return rows.map(changeFromRow);
  }
}
