import type { ColonyEvent } from '../../events/event-types.js';
import type { EventQuery } from '../../store/events/event-store.js';
import { createAgentTranscriptFold, type AgentTranscript, type AgentTranscriptFold } from './agent-transcript.js';
import { createRunViewFold, type RunView, type RunViewOptions } from '../view/run-view.js';

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
  /**
   * One agent's transcript as the log holds it now. Asked again for the same agent (a page left
   * open), only what it logged since is read, and the same object comes back while nothing changed.
   */
  transcript(agentId: string): AgentTranscript;
}

export function followRun(reader: EventReader, options: RunViewOptions = {}): FollowedRun {
  const fold = createRunViewFold(options);
  let caughtUp = false;
  // The agent whose transcript was asked for last, and how far its events were read.
  let page: { agentId: string; runId: string | null; lastSeq: number; transcript: AgentTranscriptFold } | null = null;
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
    transcript(agentId) {
      const runId = fold.runId;
      if (page === null || page.agentId !== agentId || page.runId !== runId) page = { agentId, runId, lastSeq: 0, transcript: createAgentTranscriptFold(agentId) };
      for (const event of readAll(reader, { agentId, afterSeq: page.lastSeq, ...(runId === null ? {} : { runId }) })) {
        page.transcript.add(event);
        page.lastSeq = event.seq;
      }
      return page.transcript.snapshot();
    },
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
