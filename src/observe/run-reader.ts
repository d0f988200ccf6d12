import type { ColonyEvent } from '../events/event-types.js';
import type { EventQuery } from '../store/event-store.js';
import { buildAgentTranscript, type AgentTranscript } from './agent-transcript.js';
import { createRunViewFold, type RunView, type RunViewOptions } from './run-view.js';

/** The part of an event store a viewer reads: any store, opened by any process. */
export interface EventReader {
  read(query: EventQuery): ColonyEvent[];
}

/** How many events one read takes: enough to catch up quickly, few enough to keep a frame short. */
export const READ_PAGE = 5_000;

/**
 * A run followed from its log as it grows: each `catchUp` reads what was appended since the
 * last one, a bounded number of events at a time, so a viewer opening a log of a million
 * events draws while it reads instead of after. Only the folded view is kept, never the events.
 */
export interface FollowedRun {
  /** Reads and folds up to `max` new events; returns how many it folded. */
  catchUp(max?: number): number;
  /** False while the last `catchUp` stopped at its limit with more to read. */
  readonly caughtUp: boolean;
  readonly lastSeq: number;
  view(now: number): RunView | null;
  /** One agent's transcript, read from the log now. */
  transcript(agentId: string): AgentTranscript;
}

export function followRun(reader: EventReader, options: RunViewOptions = {}): FollowedRun {
  const fold = createRunViewFold(options);
  let caughtUp = false;
  return {
    catchUp(max = READ_PAGE * 4) {
      let folded = 0;
      for (;;) {
        const limit = Math.min(READ_PAGE, max - folded);
        if (limit <= 0) {
          caughtUp = false;
          return folded;
        }
        const events = reader.read({ afterSeq: fold.lastSeq, limit, ...(options.runId === undefined ? {} : { runId: options.runId }) });
        for (const event of events) fold.add(event);
        folded += events.length;
        if (events.length < limit) {
          caughtUp = true;
          return folded;
        }
      }
    },
    get caughtUp() {
      return caughtUp;
    },
    get lastSeq() {
      return fold.lastSeq;
    },
    view: (now) => fold.snapshot(now),
    transcript: (agentId) => buildAgentTranscript(agentId, readAll(reader, { agentId, ...(fold.runId === null ? {} : { runId: fold.runId }) })),
  };
}

/** Every event matching `query`, read page by page. */
export function* readAll(reader: EventReader, query: EventQuery, untilSeq = Number.POSITIVE_INFINITY): Generator<ColonyEvent> {
  let afterSeq = query.afterSeq ?? 0;
  for (;;) {
    const events = reader.read({ ...query, afterSeq, limit: READ_PAGE });
    for (const event of events) {
      if (event.seq > untilSeq) return;
      yield event;
    }
    if (events.length < READ_PAGE) return;
    afterSeq = events.at(-1)?.seq ?? afterSeq;
  }
}
