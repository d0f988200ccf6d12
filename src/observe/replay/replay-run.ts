import type { ColonyEvent } from '../../events/event-types.js';
import { createAgentTranscriptFold, type AgentTranscript } from './agent-transcript.js';
import { READ_PAGE, oneAtATime, readAll, type EventReader } from './run-reader.js';
import { createRunViewFold, type RunView } from '../view/run-view.js';

/**
 * A recorded run played back from its log alone: a clock that moves from the run's first
 * event to its last, and the view as it was at that moment. It reads ahead a page at a time,
 * so playing a long log holds one page of events, not the log. Moves and reads asked for while
 * one is going wait for it, in the order they were asked.
 */
export interface ReplayRun {
  readonly runId: string;
  /** The run's first and last event, in milliseconds since the epoch. */
  readonly startsAt: number;
  readonly endsAt: number;
  /** The moment shown: every event at or before it is folded. */
  readonly clock: number;
  /** True once the last event was folded. */
  readonly finished: boolean;
  /**
   * Moves the clock forward to `ts` (never back), folding the events on the way; with
   * `maxEvents`, it stops after that many, the clock at the last one folded, so one call's work
   * is bounded however dense the log is there.
   */
  advanceTo(ts: number, maxEvents?: number): Promise<void>;
  /** Folds the next event alone and moves the clock to it; null at the end. */
  step(): Promise<ColonyEvent | null>;
  view(): RunView | null;
  /** The agent's transcript up to the moment shown. */
  transcript(agentId: string): Promise<AgentTranscript>;
}

export type ReplayOpening = { readonly ok: true; readonly replay: ReplayRun } | { readonly ok: false; readonly error: string };

/** A log to replay: reads, and where it ends. */
export type ReplayLog = EventReader & { lastSeq(): Promise<number> };

/** Opens the given run, or the one started last, for replay. */
export async function openReplay(reader: ReplayLog, runId?: string): Promise<ReplayOpening> {
  const starts = await reader.read({ types: ['run.started'], ...(runId === undefined ? {} : { runId }) });
  const started = starts.at(-1);
  if (started === undefined) return { ok: false, error: runId === undefined ? 'the log holds no run to replay.' : `the log holds no run ${runId}.` };
  const id = started.runId;
  const endsAt = (await lastEventOf(reader, id, started.seq))?.ts ?? started.ts;
  const fold = createRunViewFold({ runId: id });
  const inTurn = oneAtATime();
  let buffer: ColonyEvent[] = [];
  let next = 0;
  let exhausted = false;
  let clock = started.ts;

  // Every move ends having read the page after the events it folded, so `finished` and the
  // next event are known without a read.
  const readAhead = async (): Promise<void> => {
    if (next >= buffer.length && !exhausted) {
      buffer = await reader.read({ runId: id, afterSeq: fold.lastSeq, limit: READ_PAGE });
      next = 0;
      exhausted = buffer.length < READ_PAGE;
    }
  };
  const peek = async (): Promise<ColonyEvent | null> => {
    await readAhead();
    return buffer[next] ?? null;
  };
  const take = async (): Promise<ColonyEvent | null> => {
    const event = await peek();
    if (event === null) return null;
    next += 1;
    fold.add(event);
    await readAhead();
    return event;
  };

  const replay: ReplayRun = {
    runId: id,
    startsAt: started.ts,
    endsAt,
    get clock() {
      return clock;
    },
    get finished() {
      return buffer[next] === undefined;
    },
    advanceTo: (ts, maxEvents = Number.POSITIVE_INFINITY) =>
      inTurn(async () => {
        let folded = 0;
        for (let event = await peek(); event !== null && event.ts <= ts; event = await peek()) {
          if (folded >= maxEvents) {
            clock = Math.max(clock, buffer[next - 1]?.ts ?? clock);
            return;
          }
          await take();
          folded += 1;
        }
        clock = Math.max(clock, Math.min(ts, endsAt));
      }),
    step: () =>
      inTurn(async () => {
        const event = await take();
        if (event !== null) clock = Math.max(clock, event.ts);
        return event;
      }),
    view: () => fold.snapshot(clock),
    transcript: (agentId) =>
      inTurn(async () => {
        const transcript = createAgentTranscriptFold(agentId);
        for await (const event of readAll(reader, { runId: id, agentId }, fold.lastSeq)) transcript.add(event);
        return transcript.snapshot();
      }),
  };
  // The run's opening (its start and settings) is shown at once rather than at the first tick.
  await replay.advanceTo(started.ts);
  return { ok: true, replay };
}

/**
 * The run's last event, found by halving the seq range with one indexed read of one event
 * each (about twenty on a log of a million events), so a replay opens at once on a run that
 * ended without `run.ended` (it crashed) or went on after one (it was resumed).
 */
async function lastEventOf(reader: ReplayLog, runId: string, startSeq: number): Promise<ColonyEvent | null> {
  // An event of the run comes after `below`; none comes after `above`.
  let below = startSeq - 1;
  let above = await reader.lastSeq();
  while (above - below > 1) {
    const middle = Math.floor((below + above) / 2);
    if ((await reader.read({ runId, afterSeq: middle, limit: 1 })).length > 0) below = middle;
    else above = middle;
  }
  return (await reader.read({ runId, afterSeq: below, limit: 1 }))[0] ?? null;
}
