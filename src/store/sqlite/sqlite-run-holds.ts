import type Database from 'better-sqlite3';
import type { RunHoldChange } from '../tasks/task-store.js';

const RUN_HOLD_COLUMNS = 'seq, run_id AS runId, held, reason, changed_at AS changedAt';

type RunHoldRow = Omit<RunHoldChange, 'held'> & { readonly held: 0 | 1 };

function changeFromRow(row: RunHoldRow): RunHoldChange {
  return { seq: row.seq, runId: row.runId, held: row.held === 1, reason: row.reason, changedAt: row.changedAt };
}

/**
 * The user's holds on whole runs in the `run_holds` table (see `TASK_TABLE_SCHEMA`), for the
 * SQLite task store: one row per change, a run held while its latest row says so. Callers run
 * `change` inside their write transaction, and check `isHeld` in the claim's.
 */
export class SqliteRunHolds {
  constructor(private readonly statement: (sql: string) => Database.Statement) {}

  latest(runId: string): RunHoldChange | null {
    const row = this.statement(`SELECT ${RUN_HOLD_COLUMNS} FROM run_holds WHERE run_id = ? ORDER BY seq DESC LIMIT 1`).get(runId) as
      | RunHoldRow
      | undefined;
    return row === undefined ? null : changeFromRow(row);
  }

  isHeld(runId: string): boolean {
    return this.latest(runId)?.held === true;
  }

  /** Appends the change unless it changes nothing; the caller holds the write transaction. */
  change(runId: string, held: boolean, reason: string, now: number): RunHoldChange | null {
    const latest = this.latest(runId);
    const heldNow = latest?.held === true;
    if (!held && !heldNow) return null;
    if (held && heldNow && latest?.reason === reason) return null;
    const row = this.statement(
      `INSERT INTO run_holds (run_id, held, reason, changed_at) VALUES (?, ?, ?, ?) RETURNING ${RUN_HOLD_COLUMNS}`,
    ).get(runId, held ? 1 : 0, reason, now) as RunHoldRow;
    return changeFromRow(row);
  }

  after(runId: string, afterSeq: number): RunHoldChange[] {
    const rows = this.statement(`SELECT ${RUN_HOLD_COLUMNS} FROM run_holds WHERE run_id = ? AND seq > ? ORDER BY seq`).all(
      runId,
      afterSeq,
    ) as RunHoldRow[];
    return rows.map(changeFromRow);
  }
}
