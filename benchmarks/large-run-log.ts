import { seededRandom } from '../src/bench/merge/seeded-random.js';
import type { EventInput } from '../src/store/events/event-store.js';
import type { LargeRun } from './large-run.js';

/** Where a large run's log goes: any store's batched append. */
export interface LogWriter {
  appendMany(inputs: readonly EventInput[]): unknown;
  flush(): Promise<void>;
}

const BATCH = 5_000;

/**
 * Writes the run until the log holds `events` events, a moment every `gapMs` on average from
 * `startTs`, in batches; then settles it, so running workers are left with tool calls in flight.
 * Returns how many events were written and the time of the last.
 */
export async function writeLargeRun(log: LogWriter, run: LargeRun, options: { readonly events: number; readonly startTs: number; readonly gapMs: number; readonly seed: number }): Promise<{ readonly events: number; readonly lastTs: number }> {
  const random = seededRandom(options.seed);
  let ts = options.startTs;
  let written = 0;
  let batch: EventInput[] = [];
  const write = () => {
    log.appendMany(batch);
    written += batch.length;
    batch = [];
  };
  while (written + batch.length < options.events) {
    ts += Math.round(random() * 2 * options.gapMs);
    const moment = run.next(ts);
    if (moment.length === 0) break;
    batch.push(...moment);
    if (batch.length >= BATCH) write();
  }
  batch.push(...run.settle(() => (ts += Math.round(random() * 2 * options.gapMs))));
  write();
  await log.flush();
  return { events: written, lastTs: ts };
}
