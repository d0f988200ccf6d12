import type { EventQuery } from './event-store.js';
import type { EventRecord } from './event-record.js';
import { currentEventType } from '../../events/event-versions.js';

function checkWholeNumber(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new TypeError(`EventQuery.${name} must be a whole number of at least 0, got ${String(value)}.`);
  }
}

function checkText(name: string, value: string | undefined): void {
  if (value !== undefined && typeof value !== 'string') {
    throw new TypeError(`EventQuery.${name} must be a string, got ${typeof value}.`);
  }
}

/** Rejects a malformed query, which is a programmer error, before any store runs it. */
export function checkEventQuery(query: EventQuery): void {
  checkWholeNumber('afterSeq', query.afterSeq);
  checkWholeNumber('since', query.since);
  checkWholeNumber('until', query.until);
  checkWholeNumber('limit', query.limit);
  checkText('runId', query.runId);
  checkText('agentId', query.agentId);
  if (query.types !== undefined && !Array.isArray(query.types)) {
    throw new TypeError('EventQuery.types must be an array of event types.');
  }
}

/** Whether a record passes every filter of `query` except `limit`. */
export function recordMatchesQuery(record: EventRecord, query: EventQuery): boolean {
  return (
    (query.afterSeq === undefined || record.seq > query.afterSeq) &&
    (query.runId === undefined || record.runId === query.runId) &&
    (query.agentId === undefined || record.agentId === query.agentId) &&
    (query.types === undefined || (query.types as readonly string[]).includes(currentEventType(record.type, record.v))) &&
    (query.since === undefined || record.ts >= query.since) &&
    (query.until === undefined || record.ts <= query.until)
  );
}
