import type { ColonyEvent, RecordedEvent } from '../../events/event-types.js';
import { EventStamper, eventFromRecord, validateEventInput } from './event-record.js';
import type { EventRecord, ValidatedEventInput } from './event-record.js';
import { checkEventQuery, recordMatchesQuery } from './event-query.js';
import type { EventInput, EventQuery, EventStore } from './event-store.js';

export interface MemoryEventStoreOptions {
  /** The clock that stamps events appended without a ts. */
  readonly now?: () => number;
}

/** The index of the first record with seq greater than `afterSeq`; records are in seq order. */
function firstIndexAfter(records: readonly EventRecord[], afterSeq: number): number {
  let low = 0;
  let high = records.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const record = records[middle];
    if (record !== undefined && record.seq <= afterSeq) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * An event store that lives in this process only: the same contract as the SQLite store,
 * for tests and benchmarks that need no file. Nothing survives `close`.
 */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): EventStore {
  const records: EventRecord[] = [];
  const stamper = new EventStamper(0, options.now ?? Date.now);
  let closed = false;

  function keep(input: ValidatedEventInput): RecordedEvent {
    const { event, record } = stamper.stamp(input, records.length + 1);
    records.push(record);
    return event;
  }

  function checkOpen(): void {
    if (closed) throw new Error('This event store is closed; open a new one to keep using the log.');
  }

  return {
    append(input: EventInput): RecordedEvent {
      checkOpen();
      return keep(validateEventInput(input));
    },

    appendMany(inputs: readonly EventInput[]): RecordedEvent[] {
      checkOpen();
      // Every input is checked before any is kept, so an invalid one leaves the log untouched.
      return inputs.map(validateEventInput).map(keep);
    },

    async flush(): Promise<void> {
      checkOpen();
    },

    async read(query: EventQuery = {}): Promise<ColonyEvent[]> {
      checkOpen();
      checkEventQuery(query);
      const limit = query.limit ?? Number.POSITIVE_INFINITY;
      const found: ColonyEvent[] = [];
      const start = query.afterSeq === undefined ? 0 : firstIndexAfter(records, query.afterSeq);
      for (let index = start; index < records.length && found.length < limit; index += 1) {
        const record = records[index];
        if (record !== undefined && recordMatchesQuery(record, query)) found.push(eventFromRecord(record));
      }
      return found;
    },

    async lastSeq(): Promise<number> {
      checkOpen();
      return records.length;
    },

    async close(): Promise<void> {
      closed = true;
    },
  };
}
