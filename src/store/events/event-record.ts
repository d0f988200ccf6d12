import { z } from 'zod';
import { EVENT_VERSION, eventBodySchema } from '../../events/event-types.js';
import { currentEventData, currentEventType } from '../../events/event-versions.js';
import type { ColonyEvent, EventBody, EventType, RecordedEvent } from '../../events/event-types.js';
import { newId } from '../../events/ids.js';
import type { EventInput } from './event-store.js';

/**
 * One event as a store keeps it: the envelope plus the payload serialised once, at append
 * time. Keeping the text rather than the object means a caller that mutates an event it got
 * back cannot change the log, and every store returns data exactly as JSON round-trips it.
 */
export interface EventRecord {
  readonly seq: number;
  readonly id: string;
  readonly v: number;
  readonly runId: string;
  readonly agentId: string;
  readonly type: EventType;
  readonly ts: number;
  readonly data: string;
}

/** An input that passed validation: the parsed body (defaults filled in) and who it is about. */
export interface ValidatedEventInput {
  readonly runId: string;
  readonly agentId: string;
  readonly ts: number | undefined;
  readonly body: EventBody;
}

function describeValue(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

/** Checks an input the way every store must; an invalid one is a programmer error and throws. */
export function validateEventInput(input: EventInput): ValidatedEventInput {
  const { runId, agentId, ts } = input;
  if (typeof runId !== 'string' || runId.length === 0) {
    throw new TypeError(`Event runId must be a non-empty string, got ${describeValue(runId)}.`);
  }
  if (typeof agentId !== 'string' || agentId.length === 0) {
    throw new TypeError(`Event agentId must be a non-empty string (or "system"), got ${describeValue(agentId)}.`);
  }
  if (ts !== undefined && !(Number.isSafeInteger(ts) && ts >= 0)) {
    throw new TypeError(`Event ts must be whole milliseconds since the epoch, got ${describeValue(ts)}.`);
  }
  // The whole input goes to the schema: unknown keys (runId, agentId, ts) are stripped from the
  // output, and not copying the body first keeps the hot path free of an extra object.
  const parsed = eventBodySchema.safeParse(input);
  if (!parsed.success) {
    throw new TypeError(`Invalid event body of type ${describeValue(input.type)}:\n${z.prettifyError(parsed.error)}`);
  }
  return { runId, agentId, ts, body: parsed.data };
}

/** The seq of a record whose store numbers it only when it writes it. */
export const UNNUMBERED = 0;

/**
 * Hands out the envelope of each appended event: a fresh id, the version, and a ts that never
 * goes below the previous event's ts, even when the clock steps back or a caller passes an
 * older time. The seq is the store's to give (see `EventStore`): one that writes alone numbers
 * at append time, one shared by several processes only when it writes (its records carry
 * `UNNUMBERED` until then). The event handed back has no seq either way.
 */
export class EventStamper {
  private ts: number;

  constructor(
    lastTs: number,
    private readonly now: () => number,
  ) {
    this.ts = lastTs;
  }

  /** Gives `input` its envelope and `seq`; returns the event for the caller and the record to store. */
  stamp(input: ValidatedEventInput, seq: number): { event: RecordedEvent; record: EventRecord } {
    const requested = input.ts ?? this.now();
    if (!Number.isSafeInteger(requested)) {
      throw new TypeError(`The store's clock must return whole milliseconds since the epoch, got ${requested}.`);
    }
    const ts = requested > this.ts ? requested : this.ts;
    this.ts = ts;
    const { body } = input;
    // One literal, in the order of the table's columns: records are made once per event appended.
    const record: EventRecord = {
      seq,
      id: newId(ts),
      v: EVENT_VERSION,
      runId: input.runId,
      agentId: input.agentId,
      type: body.type,
      ts,
      data: JSON.stringify(body.data),
    };
    const event = {
      v: record.v,
      id: record.id,
      runId: record.runId,
      agentId: record.agentId,
      ts,
      type: body.type,
      data: body.data,
    } as RecordedEvent;
    return { event, record };
  }
}

/**
 * Rebuilds the event a record was made from, with its own fresh copy of the payload, under the
 * names its type and fields have now (a record an earlier version wrote may have older ones).
 */
export function eventFromRecord(record: EventRecord): ColonyEvent {
  const type = currentEventType(record.type, record.v);
  // The record was validated when it was appended, so the parsed payload matches its type.
  return {
    seq: record.seq,
    v: record.v,
    id: record.id,
    runId: record.runId,
    agentId: record.agentId,
    ts: record.ts,
    type,
    data: currentEventData(type, record.v, JSON.parse(record.data) as Record<string, unknown>),
  } as ColonyEvent;
}
