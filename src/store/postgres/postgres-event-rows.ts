import type { EventRecord } from '../events/event-record.js';
import type { EventQuery } from '../events/event-store.js';
import { recordedEventTypes } from '../../events/event-versions.js';
import type { Queryable } from './postgres-connection.js';

const SELECT_RECORDS = 'SELECT seq, id, v, run_id AS "runId", agent_id AS "agentId", type, ts, data FROM events';
const COLUMNS_PER_ROW = 8;
/** Rows per INSERT statement: PostgreSQL takes at most 65 535 parameters in one. */
const ROWS_PER_INSERT = 1_000;

/** The records matching a checked query, in seq order. */
export async function readEventRecords(client: Queryable, query: EventQuery): Promise<EventRecord[]> {
  const { types } = query;
  if (types !== undefined && types.length === 0) return [];
  const conditions: string[] = [];
  const parameters: (string | number | string[])[] = [];
  const add = (condition: string, value: string | number | string[] | undefined): void => {
    if (value === undefined) return;
    parameters.push(value);
    conditions.push(condition.replace('?', `$${parameters.length}`));
  };
  add('seq > ?', query.afterSeq);
  add('run_id = ?', query.runId);
  add('agent_id = ?', query.agentId);
  add('ts >= ?', query.since);
  add('ts <= ?', query.until);
  // A log an earlier version wrote may hold some of these types under their older names.
  add('type = ANY(?)', types === undefined ? undefined : recordedEventTypes(types));
  let sql = SELECT_RECORDS;
  if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
  sql += ' ORDER BY seq';
  if (query.limit !== undefined) {
    parameters.push(query.limit);
    sql += ` LIMIT $${parameters.length}`;
  }
  const { rows } = await client.query<EventRecord>(sql, parameters);
  return rows;
}

/** The highest seq in the log, 0 when it is empty. */
export async function maxEventSeq(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM events');
  return rows[0]?.seq ?? 0;
}

/** The ts of the newest event, 0 when there is none; ts never decreases along one writer's events. */
export async function lastEventTs(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ ts: number }>('SELECT ts FROM events ORDER BY seq DESC LIMIT 1');
  return rows[0]?.ts ?? 0;
}

/** Whether an event with this id is in the log. */
export async function eventExists(client: Queryable, id: string): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM events WHERE id = $1', [id]);
  return rows.length > 0;
}

/** Inserts `records` numbered from `afterSeq` + 1, in their order (their own seq, `UNNUMBERED`, is not read), a thousand rows to a statement. */
export async function insertEventRecords(client: Queryable, records: readonly EventRecord[], afterSeq: number): Promise<void> {
  for (let start = 0; start < records.length; start += ROWS_PER_INSERT) {
    const chunk = records.slice(start, start + ROWS_PER_INSERT);
    const parameters: (string | number)[] = [];
    const rows = chunk.map((record, index) => {
      parameters.push(afterSeq + start + index + 1, record.id, record.v, record.runId, record.agentId, record.type, record.ts, record.data);
      const first = index * COLUMNS_PER_ROW;
      return `(${Array.from({ length: COLUMNS_PER_ROW }, (_, column) => `$${first + column + 1}`).join(', ')})`;
    });
    await client.query(`INSERT INTO events (seq, id, v, run_id, agent_id, type, ts, data) VALUES ${rows.join(', ')}`, parameters);
  }
}
