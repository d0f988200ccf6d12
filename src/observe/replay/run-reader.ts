import type { ColonyEvent } from '../../events/event-types.js';
import type { EventQuery } from '../../store/events/event-store.js';
import { createAgentTranscriptFold, type AgentTranscript, type AgentTranscriptFold } from './agent-transcript.js';
import { createRunViewFold, type RunView, type RunViewOptions } from '../view/run-view.js';

/** The part of an event store a viewer reads: any store, opened by any process. */
export interface EventReader {
  read(query: EventQuery): Promise<ColonyEvent[]>;
}

/** How many events one read takes: enough to catch up quickly, few enough to keep a frame short. */
export const READ_PAGE = 5_000;

/**
 * A run followed from its log as it grows: each `catchUp` reads what was appended since the
 * last one, a bounded number of events at a time, so a viewer opening a log of a million
 * events draws while it reads instead of after. Only the folded view is kept, never the events.
 * Reads asked for while one is going wait for it, so none folds what another is folding.
 */
export interface FollowedRun {
  /** Reads and folds up to `max` new events; resolves to how many it folded. */
  catchUp(max?: number): Promise<number>;
  /** False while the last `catchUp` stopped at its limit with more to read. */
  readonly caughtUp: boolean;
  readonly lastSeq: number;
  view(now: number): RunView | null;
  /**
   * One agent's transcript as the log holds it now. Asked again for the same agent (a page left
   * open), only what it logged since is read, and the same object comes back while nothing changed.
   */
  transcript(agentId: string): Promise<AgentTranscript>;
}

export function followRun(reader: EventReader, options: RunViewOptions = {}): FollowedRun {
  const fold = createRunViewFold(options);
  const inTurn = oneAtATime();
  let caughtUp = false;
  // The agent whose transcript was asked for last, and how far its events were read.
  let page: { agentId: string; runId: string | null; lastSeq: number; transcript: AgentTranscriptFold } | null = null;
  return {
    catchUp: (max = READ_PAGE * 4) =>
      inTurn(async () => {
        let folded = 0;
        for (;;) {
          const limit = Math.min(READ_PAGE, max - folded);
          if (limit <= 0) {
            caughtUp = false;
            return folded;
          }
          const events = await reader.read({ afterSeq: fold.lastSeq, limit, ...(options.runId === undefined ? {} : { runId: options.runId }) });
          for (const event of events) fold.add(event);
          folded += events.length;
          if (events.length < limit) {
            caughtUp = true;
            return folded;
          }
        }
      }),
    get caughtUp() {
      return caughtUp;
    },
    get lastSeq() {
      return fold.lastSeq;
    },
    view: (now) => fold.snapshot(now),
    transcript: (agentId) =>
      inTurn(async () => {
        const runId = fold.runId;
        if (page === null || page.agentId !== agentId || page.runId !== runId) page = { agentId, runId, lastSeq: 0, transcript: createAgentTranscriptFold(agentId) };
        const read = page;
        for await (const event of readAll(reader, { agentId, afterSeq: read.lastSeq, ...(runId === null ? {} : { runId }) })) {
          read.transcript.add(event);
          read.lastSeq = event.seq;
        }
        return read.transcript.snapshot();
      }),
  };
}

/** Every event matching `query`, read page by page. */
export async function* readAll(reader: EventReader, query: EventQuery, untilSeq = Number.POSITIVE_INFINITY): AsyncGenerator<ColonyEvent> {
  let afterSeq = query.afterSeq ?? 0;
  for (;;) {
    const events = await reader.read({ ...query, afterSeq, limit: READ_PAGE });
    for (const event of events) {
      if (event.seq > untilSeq) return;
      yield event;
    }
    if (events.length < READ_PAGE) return;
    afterSeq = events.at(-1)?.seq ?? afterSeq;
  }
}

/**
 * Runs the work handed to it one piece after another, each once the one before has settled
 * (failed or not): a fold read from two places at once would fold the same events twice.
 */
export function oneAtATime(): <T>(work: () => Promise<T>) => Promise<T> {
  let turn: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = turn.then(work);
    turn = next.catch(() => undefined);
    return next;
  };
}
