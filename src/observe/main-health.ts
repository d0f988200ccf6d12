import type { CheckCounts, MainHealth } from './run-analysis-sections.js';
import type { EventOf } from './event-of.js';
import { shareOf } from './ranking.js';

/** The checks that say whether main was red, counted as they are recorded. */
export type MainHealthEvent = EventOf<'main.checked'> | EventOf<'merge.checked'> | EventOf<'acceptance.checked'>;

/**
 * How often main, or what was about to become main, was red. Kept apart from the rest of the
 * analysis so a new kind of check (a green-branch snapshot, say) is one more case here.
 */
export interface MainHealthFold {
  add(event: MainHealthEvent): void;
  result(): MainHealth;
}

export function createMainHealthFold(): MainHealthFold {
  const main = { runs: 0, failed: 0 };
  const merges = { runs: 0, failed: 0 };
  const acceptance = { runs: 0, failed: 0 };
  let lastMain: MainHealth['lastMain'] = null;
  const count = (counts: { runs: number; failed: number }, passed: boolean): void => {
    counts.runs += 1;
    if (!passed) counts.failed += 1;
  };
  return {
    add(event) {
      switch (event.type) {
        case 'main.checked':
          count(main, event.data.passed);
          lastMain = { commit: event.data.commit, passed: event.data.passed, at: event.ts };
          return;
        case 'merge.checked':
          count(merges, event.data.passed);
          return;
        case 'acceptance.checked':
          // Skipped checks ran nothing (nothing had landed): they say nothing of main.
          if (event.data.skipped === null) count(acceptance, event.data.passed);
          return;
      }
    },
    result() {
      const all = { runs: main.runs + merges.runs + acceptance.runs, failed: main.failed + merges.failed + acceptance.failed };
      return { main: countsOf(main), merges: countsOf(merges), acceptance: countsOf(acceptance), all: countsOf(all), lastMain: lastMain === null ? null : { ...lastMain } };
    },
  };
}

function countsOf(counts: { runs: number; failed: number }): CheckCounts {
  return { runs: counts.runs, failed: counts.failed, share: shareOf(counts.failed, counts.runs) };
}
