import type { ColonyEvent, EventType } from '../events/event-types.js';

/** One event of the given type, envelope included: what the analysis folds hand each other. */
export type EventOf<T extends EventType> = Extract<ColonyEvent, { type: T }>;
