import type { Sleep } from '../resilience/abortable-sleep.js';

/**
 * A clock for tests that moves only when told: `now` and an abortable `sleep` over the same
 * time, so code that waits can be stepped through without waiting.
 */
export interface ManualClock {
  readonly now: () => number;
  readonly sleep: Sleep;
  /** Moves time on and wakes every sleep that is due, in the order they are due. */
  advance(ms: number): void;
  /** Sleeps not yet over. */
  pending(): number;
}

export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let time = start;
  const sleepers: { readonly at: number; readonly wake: () => void }[] = [];

  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true) {
        resolve();
        return;
      }
      const sleeper = {
        at: time + ms,
        wake: () => {
          signal?.removeEventListener('abort', sleeper.wake);
          const position = sleepers.indexOf(sleeper);
          if (position !== -1) sleepers.splice(position, 1);
          resolve();
        },
      };
      sleepers.push(sleeper);
      signal?.addEventListener('abort', sleeper.wake, { once: true });
    });

  return {
    now: () => time,
    sleep,
    advance(ms) {
      time += ms;
      const due = sleepers.filter((sleeper) => sleeper.at <= time).sort((a, b) => a.at - b.at);
      for (const sleeper of due) sleeper.wake();
    },
    pending: () => sleepers.length,
  };
}

/** Lets every promise callback already queued run (and the ones those queue, a few levels deep). */
export async function settle(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}
