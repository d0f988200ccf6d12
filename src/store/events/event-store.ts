import type { ColonyEvent, EventBody, EventType, RecordedEvent } from '../../events/event-types.js';

/** What a writer appends: the body plus who it is about. The store adds seq, v, id and ts. */
export type EventInput = EventBody & { readonly runId: string; readonly agentId: string; readonly ts?: number };

export interface EventQuery {
  /** Only events with seq greater than this (for incremental reads and --follow). */
  readonly afterSeq?: number;
  readonly runId?: string;
  readonly agentId?: string;
  /** Only events of these types; an empty list matches nothing. */
  readonly types?: readonly EventType[];
  /** Inclusive bounds on ts, milliseconds since the epoch. */
  readonly since?: number;
  readonly until?: number;
  /** At most this many events, the first ones in seq order. */
  readonly limit?: number;
}

/**
 * The append-only event log: the source of truth of a run.
 *
 * Contract, held by every implementation through one conformance suite:
 * - `append` validates the body (an invalid one is a programmer error and throws) and returns
 *   the event as recorded, with its id, version and ts but not yet its `seq`: it does not wait
 *   for the store, so an agent never waits on the log to go on. Events of one store get strictly
 *   increasing `seq`, in the order they become visible to readers, and the events of one writer
 *   keep the order they were appended in with non-decreasing `ts`.
 * - Appended events may be buffered; `flush` makes every event appended so far durable and
 *   visible to other readers of the same store, before it resolves.
 * - `read` returns events in `seq` order, including buffered ones of this instance (it writes
 *   them first).
 * - Events are never changed or removed.
 */
export interface EventStore {
  append(input: EventInput): RecordedEvent;
  appendMany(inputs: readonly EventInput[]): RecordedEvent[];
  flush(): Promise<void>;
  read(query?: EventQuery): Promise<ColonyEvent[]>;
  /** The highest seq stored so far, 0 when empty. */
  lastSeq(): Promise<number>;
  close(): Promise<void>;
}
