import Database from 'better-sqlite3';
import { eventBodySchema, EVENT_VERSION } from '../../events/event-types.js';
import type { ColonyEvent } from '../../events/event-types.js';
import { openSqliteEventStore } from '../sqlite/sqlite-event-store.js';

/** What `checkEventLog` found in a log file. */
export interface EventLogCheck {
  /** SQLite's own verdict on the file: `['ok']` when every page and index is sound. */
  readonly integrity: string[];
  /** Every stored seq, in order. */
  readonly seqs: number[];
  /** The events that do not read back through the event schema, with why. */
  readonly invalid: string[];
  /** Each event's id, in seq order, to compare one copy of a log with another. */
  readonly ids: string[];
}

/**
 * Opens the SQLite event log at `path` the way colony does (which is when SQLite recovers a
 * WAL left by a crash) and reads everything back: SQLite's integrity check, the seqs, and
 * every event through the event schema. For tests that damage a log and check that it opens
 * sound.
 */
export async function checkEventLog(path: string): Promise<EventLogCheck> {
  const store = openSqliteEventStore(path);
  let events: ColonyEvent[];
  try {
    events = await store.read();
  } finally {
    await store.close();
  }
  const invalid: string[] = [];
  for (const event of events) {
    const parsed = eventBodySchema.safeParse({ type: event.type, data: event.data });
    if (!parsed.success) invalid.push(`seq ${event.seq}: ${parsed.error.message}`);
    if (event.v !== EVENT_VERSION || event.id === '' || event.runId === '' || !Number.isSafeInteger(event.ts)) {
      invalid.push(`seq ${event.seq}: a damaged envelope ${JSON.stringify({ ...event, data: undefined })}`);
    }
  }
  const db = new Database(path, { readonly: true });
  let integrity: string[];
  try {
    integrity = db.prepare('PRAGMA integrity_check').pluck().all() as string[];
  } finally {
    db.close();
  }
  return { integrity, seqs: events.map((event) => event.seq), invalid, ids: events.map((event) => event.id) };
}
