import type Database from 'better-sqlite3';
import type { ColonyEvent, RecordedEvent } from '../../events/event-types.js';
import { EventStamper, eventFromRecord, validateEventInput } from '../events/event-record.js';
import type { EventRecord, ValidatedEventInput } from '../events/event-record.js';
import { checkEventQuery, recordMatchesQuery } from '../events/event-query.js';
import type { EventInput, EventQuery, EventStore } from '../events/event-store.js';
import { dirname } from 'node:path';
import { isDiskFull } from './disk-full.js';
import { EVENT_LOG_SCHEMA } from './sqlite-event-schema.js';
import { SqliteEventReader } from './sqlite-event-reader.js';
import { folderIsWritable, openReadOnlyStoreConnection, openSqliteStoreConnection, sqliteCode } from './sqlite-connection.js';
import { errorMessage } from '../../errors/error-message.js';

export interface SqliteEventStoreOptions {
  /** The clock that stamps events appended without a ts. */
  readonly now?: () => number;
  /** How long a statement waits for another connection's lock before it fails. */
  readonly busyTimeoutMs?: number;
  /**
   * How long appended events may wait in memory before they are written without a `flush`.
   * Each write syncs to disk, so writing every event on its own would cost a sync per event;
   * callers flush explicitly where durability matters (before an effect).
   */
  readonly autoFlushMs?: number;
  /**
   * Whether each write is synced to disk (`synchronous = FULL`, the default). `false` sets
   * `synchronous = OFF`: a flushed event can then be lost, or the file damaged, when the
   * machine crashes. It exists only to measure what durability costs (the append benchmark);
   * colony never opens its log that way.
   */
  readonly durable?: boolean;
  /**
   * Only read: nothing is created or migrated, and every append throws. The file must hold the
   * event log at this colony's version; in a folder that cannot be written it is read as it
   * was last checkpointed (see `openReadOnlyStoreConnection`).
   */
  readonly readOnly?: boolean;
}

/** Buffered events are written at the latest when this many are waiting. */
const FLUSH_THRESHOLD = 256;
const DEFAULT_BUSY_TIMEOUT_MS = 5_000;
const DEFAULT_AUTO_FLUSH_MS = 100;

/**
 * Opens the connection a SQLite event log is written through: see `openSqliteStoreConnection`
 * (WAL, `synchronous = FULL` so a flushed event survives a power loss unless `durable` is
 * false, the busy timeout, the schema migrated). Throws with what to do when the file cannot
 * hold the log.
 */
export function openEventLogConnection(path: string, busyTimeoutMs: number, durable = true): Database.Database {
  return openSqliteStoreConnection(path, busyTimeoutMs, EVENT_LOG_SCHEMA, 'event log', durable);
}

/**
 * The event log in one SQLite file, in WAL mode so readers never block the writer.
 *
 * One process writes a file: seq numbers are handed out in memory at append time, from a
 * counter that starts at the file's highest seq when the store opens. Any number of other
 * connections, in this process or others, may read the same file at the same time (they see
 * what has been flushed). Several machines or processes writing one log is what the
 * PostgreSQL store is for; a second writer here is detected at flush and reported.
 *
 * Appends are buffered and written in one transaction: on `flush`, as soon as the current
 * turn of the event loop ends, or when 256 events are waiting. Each transaction is synced to
 * disk before it returns, so what `flush` wrote survives a crash or a power loss. Call `flush`
 * (or `close`) before the process exits to be sure nothing is still in memory. If a write fails, the
 * events stay buffered and nothing is dropped: `flush`, `read`, `close` and the next `append`
 * retry the write and throw while it keeps failing (a `close` that throws leaves the store
 * open, so it can be retried); while the disk is full, `append` keeps buffering instead of
 * throwing, and `flush` says so (`isDiskFull`).
 */
class SqliteEventStore implements EventStore {
  private readonly reader: SqliteEventReader;
  private readonly stamper: EventStamper;
  /** The seq of the last event appended through this store: the file's highest when it opened, then counted up. */
  private lastSeqHandedOut: number;
  private readonly writeRecords: (records: readonly EventRecord[]) => void;
  private pending: EventRecord[] = [];
  private scheduled: NodeJS.Timeout | undefined;
  private writeFailure: Error | undefined;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly autoFlushMs: number,
    now: () => number,
    private readonly readOnly = false,
  ) {
    this.reader = new SqliteEventReader(db);
    this.lastSeqHandedOut = this.reader.maxSeq();
    this.stamper = new EventStamper(this.reader.lastTs(), now);
    const insert = db.prepare(
      'INSERT INTO events (seq, id, v, run_id, agent_id, type, ts, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const write = db.transaction((records: readonly EventRecord[]) => {
      for (const record of records) {
        insert.run(record.seq, record.id, record.v, record.runId, record.agentId, record.type, record.ts, record.data);
      }
    });
    this.writeRecords = (records) => write.immediate(records);
  }

  append(input: EventInput): RecordedEvent {
    this.checkWritable();
    const event = this.buffer(validateEventInput(input));
    this.afterBuffering();
    return event;
  }

  appendMany(inputs: readonly EventInput[]): RecordedEvent[] {
    this.checkWritable();
    // Every input is checked before any is stamped, so an invalid one leaves the log untouched.
    const validated = inputs.map(validateEventInput);
    const events = validated.map((input) => this.buffer(input));
    if (events.length > 0) this.afterBuffering();
    return events;
  }

  /** Stamps and numbers one checked input and puts it in the buffer. */
  private buffer(input: ValidatedEventInput): RecordedEvent {
    this.lastSeqHandedOut += 1;
    const { event, record } = this.stamper.stamp(input, this.lastSeqHandedOut);
    this.pending.push(record);
    return event;
  }

  async flush(): Promise<void> {
    this.checkOpen();
    this.writePending();
  }

  async read(query: EventQuery = {}): Promise<ColonyEvent[]> {
    this.checkOpen();
    checkEventQuery(query);
    try {
      this.writePending();
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      // The disk is full: what is on disk, then what waits in memory, in seq order as always.
      const { limit: _limit, ...unlimited } = query;
      const stored = this.reader.read(unlimited);
      const waiting = this.pending.filter((record) => recordMatchesQuery(record, query));
      const all = [...stored.map(eventFromRecord), ...waiting.map(eventFromRecord)];
      return query.limit === undefined ? all : all.slice(0, query.limit);
    }
    return this.reader.read(query).map(eventFromRecord);
  }

  async lastSeq(): Promise<number> {
    this.checkOpen();
    return Math.max(this.lastSeqHandedOut, this.reader.maxSeq());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.db.close();
    this.closed = true;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`The event store for ${this.path} is closed; open it again to keep using it.`);
  }

  private checkWritable(): void {
    this.checkOpen();
    if (this.readOnly) throw new TypeError(`${this.path} was opened to be read only, so no event can be appended to it.`);
    // A failed background write is retried here, so an append never piles onto a broken log.
    // A full disk is the exception: the log is not broken, only out of room, and refusing the
    // append would lose the event; it waits in memory with the rest until a flush succeeds.
    if (this.writeFailure === undefined) return;
    try {
      this.writePending();
    } catch (error) {
      if (!isDiskFull(error)) throw error;
    }
  }

  private afterBuffering(): void {
    if (this.pending.length >= FLUSH_THRESHOLD) this.writeInBackground();
    else if (this.scheduled === undefined) {
      this.scheduled = setTimeout(() => {
        this.scheduled = undefined;
        if (!this.closed) this.writeInBackground();
      }, this.autoFlushMs);
      // Pending events never keep the process alive: close() writes them.
      this.scheduled.unref();
    }
  }

  /** A write nobody waits on: its failure is kept and reported by the next append or flush. */
  private writeInBackground(): void {
    try {
      this.writePending();
    } catch {
      // writePending kept the failure in writeFailure and the events in pending.
    }
  }

  private writePending(): void {
    if (this.pending.length === 0) {
      this.writeFailure = undefined;
      return;
    }
    try {
      this.writeRecords(this.pending);
    } catch (error) {
      this.writeFailure = this.describeWriteFailure(error);
      throw this.writeFailure;
    }
    this.pending = [];
    this.writeFailure = undefined;
  }

  private describeWriteFailure(error: unknown): Error {
    const count = this.pending.length;
    const code = sqliteCode(error);
    const unwritten = count === 1 ? 'The 1 unwritten event is' : `The ${count} unwritten events are`;
    const kept = `${unwritten} kept in memory and written at the next try once the cause is fixed; a process that ends before then loses them.`;
    let message: string;
    if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      message =
        `Another connection appended events to ${this.path} with the seq numbers this store had handed out. ` +
        'A SQLite event log takes one writing process: a second colony run on the same state directory ' +
        'must wait for the first to end, and other processes may only read it.';
    } else if (isDiskFull(error)) {
      message = `The disk holding ${this.path} is full, so no event could be written. ${unwritten} kept in memory; free some space and colony writes them (a run waits for the space, new agents held back until then).`;
    } else if (code.startsWith('SQLITE_BUSY')) {
      message =
        `${this.path} stayed locked by another writer for more than ${this.busyTimeoutMs} ms. ` +
        `A SQLite event log takes one writing process. ${kept}`;
    } else {
      message = `Could not write events to ${this.path}: ${errorMessage(error)}. ${kept}`;
    }
    return new Error(message, { cause: error });
  }
}

/**
 * Opens (creating it and its folder when missing) the SQLite event log at `path`.
 * Throws with what to do when the file is not a SQLite database, belongs to another program,
 * or was written by a newer colony.
 */
export function openSqliteEventStore(path: string, options: SqliteEventStoreOptions = {}): EventStore {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const readOnly = options.readOnly === true;
  const db = readOnly
    ? openReadOnlyStoreConnection(path, busyTimeoutMs, EVENT_LOG_SCHEMA, 'event log')
    : openEventLogConnection(path, busyTimeoutMs, options.durable ?? true);
  return new SqliteEventStore(db, path, busyTimeoutMs, options.autoFlushMs ?? DEFAULT_AUTO_FLUSH_MS, options.now ?? Date.now, readOnly);
}

/**
 * Opens the event log at `path` for a command that only reads it: as `openSqliteEventStore`
 * does where its folder can be written (so a log an earlier colony wrote is brought up to date
 * first), and read-only where it cannot be (a read-only mount, a copy kept for the record):
 * nothing is created, migrated or written there.
 */
export function openSqliteEventLogToRead(path: string): EventStore {
  return openSqliteEventStore(path, { readOnly: !folderIsWritable(dirname(path)) });
}
