import type Database from 'better-sqlite3';
import type { EventRecord } from '../events/event-record.js';
import type { EventQuery } from '../events/event-store.js';
import { recordedEventTypes } from '../../events/event-versions.js';

const SELECT_RECORDS =
  'SELECT seq, id, v, run_id AS runId, agent_id AS agentId, type, ts, data FROM events';

/**
 * Runs event queries with prepared statements. A query's shape (which filters it uses, how
 * many types) picks the SQL; each shape is prepared once and reused, so a `--follow` loop
 * that reads every second does no SQL parsing after its first read.
 */
export class SqliteEventReader {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** The records matching a checked query, in seq order. */
  read(query: EventQuery): EventRecord[] {
    const { types } = query;
    if (types !== undefined && types.length === 0) return [];
    const conditions: string[] = [];
    const parameters: (string | number)[] = [];
    const add = (condition: string, value: string | number | undefined): void => {
      if (value === undefined) return;
      conditions.push(condition);
      parameters.push(value);
    };
    add('seq > ?', query.afterSeq);
    add('run_id = ?', query.runId);
    add('agent_id = ?', query.agentId);
    add('ts >= ?', query.since);
    add('ts <= ?', query.until);
    if (types !== undefined) {
      // A log an earlier version wrote may hold some of these types under their older names.
      const recorded = recordedEventTypes(types);
      conditions.push(`type IN (${recorded.map(() => '?').join(', ')})`);
      parameters.push(...recorded);
    }
    let sql = SELECT_RECORDS;
    if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
    sql += ' ORDER BY seq';
    if (query.limit !== undefined) {
      sql += ' LIMIT ?';
      parameters.push(query.limit);
    }
    return this.statement(sql).all(...parameters) as EventRecord[];
  }

  /** The highest seq in the table, 0 when it is empty. */
  maxSeq(): number {
    const row = this.statement('SELECT MAX(seq) AS seq FROM events').get() as { seq: number | null };
    return row.seq ?? 0;
  }

  /** The ts of the newest event, 0 when there is none; ts never decreases along seq. */
  lastTs(): number {
    const row = this.statement('SELECT ts FROM events ORDER BY seq DESC LIMIT 1').get() as
      | { ts: number }
      | undefined;
    return row?.ts ?? 0;
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
