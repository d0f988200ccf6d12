import type { ColonyEvent, RecordedEvent } from '../../events/event-types.js';
import { errorMessage } from '../../errors/error-message.js';
import { EventStamper, UNNUMBERED, eventFromRecord, validateEventInput } from '../events/event-record.js';
import type { EventRecord, ValidatedEventInput } from '../events/event-record.js';
import { checkEventQuery } from '../events/event-query.js';
import type { EventInput, EventQuery, EventStore } from '../events/event-store.js';
import type { PostgresConnection } from './postgres-connection.js';
import { eventExists, insertEventRecords, lastEventTs, maxEventSeq, readEventRecords } from './postgres-event-rows.js';
import { CommitOutcomeUnknownError, PostgresStoreError } from './postgres-failures.js';

export interface PostgresEventLogOptions {
  /** The clock that stamps events appended without a ts. */
  readonly now?: () => number;
  /** How long appended events may wait in memory before they are written without a `flush` (default 50 ms). */
  readonly autoFlushMs?: number;
}

/** Buffered events are written at the latest when this many are waiting. */
const FLUSH_THRESHOLD = 256;
const DEFAULT_AUTO_FLUSH_MS = 50;

/** A batch whose COMMIT was sent when its connection broke: written or not, the next write finds out. */
interface UncertainBatch {
  readonly firstId: string;
  readonly count: number;
}

/**
 * The event log in PostgreSQL, written by any number of processes on any number of machines.
 *
 * `append` stamps the event (id, version, ts never below this writer's last) and buffers it;
 * it has no seq yet. Buffered events are written in one transaction (on `flush`, `read`,
 * `lastSeq` and `close`, 50 ms after the first unwritten one, or when 256 wait), one write at a
 * time per store: the transaction takes the log's advisory lock, reads the highest seq and
 * numbers the batch on from it. Writers thus commit one after another in seq order, so a reader
 * following with `afterSeq` never finds a lower seq committed after a higher one it has read.
 *
 * A write that fails keeps the events buffered and in order; the next write tries them again,
 * and `flush` rejects saying what happened. A write whose connection broke while committing is
 * checked, under the lock, by its first event's id before anything is written again, so no
 * event is written twice.
 */
class PostgresEventStore implements EventStore {
  private readonly stamper: EventStamper;
  private pending: EventRecord[] = [];
  private uncertain: UncertainBatch | undefined;
  /** The write going on, if any; every write waits for the one before it. */
  private writing: Promise<void> = Promise.resolve();
  /** The write waiting for the one under way, if any: it takes every event buffered when it starts. */
  private queued: Promise<void> | undefined;
  private scheduled: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly connection: PostgresConnection,
    lastTs: number,
    now: () => number,
    private readonly autoFlushMs: number,
  ) {
    this.stamper = new EventStamper(lastTs, now);
  }

  append(input: EventInput): RecordedEvent {
    this.checkOpen();
    const event = this.buffer(validateEventInput(input));
    this.afterBuffering();
    return event;
  }

  appendMany(inputs: readonly EventInput[]): RecordedEvent[] {
    this.checkOpen();
    // Every input is checked before any is stamped, so an invalid one leaves the log untouched.
    const events = inputs.map(validateEventInput).map((input) => this.buffer(input));
    if (events.length > 0) this.afterBuffering();
    return events;
  }

  async flush(): Promise<void> {
    this.checkOpen();
    await this.write();
  }

  async read(query: EventQuery = {}): Promise<ColonyEvent[]> {
    this.checkOpen();
    checkEventQuery(query);
    await this.write();
    const records = await this.connection.read((client) => readEventRecords(client, query));
    return records.map(eventFromRecord);
  }

  /** The highest seq written so far, after writing this store's buffer; 0 when the log is empty. */
  async lastSeq(): Promise<number> {
    this.checkOpen();
    await this.write();
    return this.connection.read(maxEventSeq);
  }

  /** Writes what is buffered and lets go of the pool; a write that fails leaves the store open, to be closed again. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.write();
    if (this.scheduled !== undefined) clearTimeout(this.scheduled);
    this.closed = true;
    await this.connection.release();
  }

  private buffer(input: ValidatedEventInput): RecordedEvent {
    const { event, record } = this.stamper.stamp(input, UNNUMBERED);
    this.pending.push(record);
    return event;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error(`The event store for ${this.connection.describe()} is closed; open it again to keep using it.`);
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

  /** A write nobody waits on: the events it could not write stay buffered, and the next flush reports why. */
  private writeInBackground(): void {
    this.write().catch(() => undefined);
  }

  /**
   * Writes every event buffered when its turn comes, after the write under way. At most one
   * waits behind that one, and every caller until it starts shares it (it takes their events
   * too): while the database is down each write takes the connection's whole retry time, and a
   * queue of them would keep a flush, or the end of a run, waiting for as many.
   */
  private write(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const next = this.writing.then(() => {
      this.queued = undefined;
      return this.writePending();
    });
    this.queued = next;
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async writePending(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending.slice();
    const lock = this.connection.lockKey('events');
    /** How many events at the head of the batch an earlier, uncertain commit turned out to have written. */
    let written = 0;
    let checked = false;
    try {
      await this.connection.transaction(async (client) => {
        written = 0;
        checked = false;
        // Held to the end of the transaction: writers commit one at a time, in seq order.
        await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lock]);
        // Under the lock, an uncertain commit is over either way: its first event tells which.
        if (this.uncertain !== undefined && (await eventExists(client, this.uncertain.firstId))) written = this.uncertain.count;
        checked = true;
        await insertEventRecords(client, batch.slice(written), await maxEventSeq(client));
      });
    } catch (error) {
      if (checked) this.settleUncertain(written);
      const unsure = batch[written];
      if (error instanceof CommitOutcomeUnknownError && unsure !== undefined) this.uncertain = { firstId: unsure.id, count: batch.length - written };
      throw this.describeWriteFailure(error);
    }
    this.pending.splice(0, batch.length);
    this.uncertain = undefined;
  }

  /** Drops from the buffer the events an uncertain commit did write; either way it is no longer uncertain. */
  private settleUncertain(written: number): void {
    this.pending.splice(0, written);
    this.uncertain = undefined;
  }

  private describeWriteFailure(error: unknown): Error {
    const count = this.pending.length;
    const unwritten = count === 1 ? 'The 1 unwritten event is' : `The ${count} unwritten events are`;
    const message =
      `Could not write events to the event log in ${this.connection.describe()}: ${this.connection.redact(errorMessage(error))} ` +
      `${unwritten} kept in memory and written at the next flush; a process that ends before then loses them.`;
    // A store that cannot be used (gone, refusing) is said as such; anything else is colony's own fault.
    return error instanceof PostgresStoreError ? new PostgresStoreError(message, { cause: error }) : new Error(message, { cause: error });
  }
}

/**
 * The event log on `connection`, its schema migrated; the connection is retained and released
 * when the store closes.
 */
export async function openPostgresEventLog(connection: PostgresConnection, options: PostgresEventLogOptions = {}): Promise<EventStore> {
  const lastTs = await connection.read(lastEventTs);
  connection.retain();
  return new PostgresEventStore(connection, lastTs, options.now ?? Date.now, options.autoFlushMs ?? DEFAULT_AUTO_FLUSH_MS);
}
