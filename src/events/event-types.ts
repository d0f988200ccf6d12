import { z } from 'zod';
import { runAgentBodies } from './bodies/run-agent-bodies.js';
import { taskBodies } from './bodies/task-bodies.js';
import { workspaceBodies } from './bodies/workspace-bodies.js';

/**
 * Every event colony records, as one discriminated union on `type`. Names are
 * noun.past-tense-verb. A payload only ever gains optional fields within a version; a change
 * that breaks readers bumps EVENT_VERSION, and `event-versions.ts` reads what earlier versions
 * wrote as it reads now. Version 2 renamed `agent.resumed` to `agent.unparked`; version 3 renamed
 * `agent.restored`'s `generation` to `attempt` and `andon.changed`'s `holdSeq` to `andonSeq`.
 */
export const EVENT_VERSION = 3;

const bodies = [...runAgentBodies, ...workspaceBodies, ...taskBodies] as const;

/** What a caller hands to the store: the type and its payload. */
export const eventBodySchema = z.discriminatedUnion('type', bodies);
export type EventBody = z.infer<typeof eventBodySchema>;
export type EventType = EventBody['type'];

/** The fields every stored event carries besides its body. */
export interface EventEnvelope {
  /** Position in the log, assigned by the store; strictly increasing. */
  readonly seq: number;
  readonly v: number;
  /** Unique and sortable by creation time. */
  readonly id: string;
  readonly runId: string;
  /** The agent the event is about, or "system" for run-level events. */
  readonly agentId: string;
  /** Milliseconds since the Unix epoch. */
  readonly ts: number;
}

export type ColonyEvent = EventEnvelope & EventBody;

/**
 * An event as its writer recorded it, before it is written: everything but its place in the log
 * (`seq`), which a store shared by several processes only knows once the event is written.
 */
export type RecordedEvent = Omit<EventEnvelope, 'seq'> & EventBody;

/** The payload type of one event type. */
export type EventData<T extends EventType> = Extract<EventBody, { type: T }>['data'];

export const EVENT_TYPES: readonly EventType[] = bodies.map((body) => body.shape.type.value);
