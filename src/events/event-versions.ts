import type { EventType } from './event-types.js';

/**
 * The event types renamed since the first version, so a log an earlier colony wrote still reads,
 * replays and resumes: an event recorded before version `in` under `from` is read as `to`. Its
 * payload did not change.
 */
export const RENAMED_EVENT_TYPES: readonly { readonly from: string; readonly to: EventType; readonly in: number }[] = [
  // A parked agent going on was `agent.resumed`, a word `run.resumed` (`colony resume`) also used.
  { from: 'agent.resumed', to: 'agent.unparked', in: 2 },
];

/**
 * The payload fields renamed since the first version: in an event of `type` (its type now)
 * recorded before version `in`, the field `from` is read as `to`.
 */
export const RENAMED_EVENT_FIELDS: readonly { readonly type: EventType; readonly from: string; readonly to: string; readonly in: number }[] = [
  // A restored agent's claim of its task was its `generation`; it is the task's attempt, as in `agent.started` and the task store.
  { type: 'agent.restored', from: 'generation', to: 'attempt', in: 3 },
  // The user's pause of a whole run was its hold; it is the run's andon, as the event's own type says.
  { type: 'andon.changed', from: 'holdSeq', to: 'andonSeq', in: 3 },
];

/** The type an event recorded under `type` at version `v` has now. */
export function currentEventType(type: string, v: number): string {
  for (const rename of RENAMED_EVENT_TYPES) if (rename.from === type && v < rename.in) return rename.to;
  return type;
}

/** The types a log may hold the events of `types` under: each, and the names it had before. */
export function recordedEventTypes(types: readonly string[]): string[] {
  const names = new Set(types);
  for (const rename of RENAMED_EVENT_TYPES) if (names.has(rename.to)) names.add(rename.from);
  return [...names];
}

/** The payload of an event of `type` (its type now) recorded at version `v`, its renamed fields under their names now. */
export function currentEventData(type: string, v: number, data: Record<string, unknown>): Record<string, unknown> {
  let current = data;
  for (const rename of RENAMED_EVENT_FIELDS) {
    if (rename.type !== type || v >= rename.in || !(rename.from in current)) continue;
    const { [rename.from]: value, ...rest } = current;
    current = { ...rest, [rename.to]: value };
  }
  return current;
}
