import type { ColonyEvent } from '../../events/event-types.js';
import type { EventOf } from '../event-of.js';
import { createGreenHealthFold } from '../green-health.js';
import { shareOf } from '../ranking.js';
import type { CheckCounts, GreenBisect, MainHealth } from './types.js';

/** Bisects listed one by one, the latest; `bisects` counts them all. */
const BISECTS_LISTED = 20;
/** Failure lines kept per bisect listed. */
const FAILURES_LISTED = 3;

/**
 * How often main, or what was about to become main, was red. Kept apart from the rest of the
 * analysis so a new kind of check is one more case here. It takes every event of the run, in
 * order: the green loop's red time runs on the run's clock, which every event moves.
 */
export interface MainHealthFold {
  add(event: ColonyEvent): void;
  result(): MainHealth;
}

export function createMainHealthFold(): MainHealthFold {
  const main = { runs: 0, failed: 0 };
  const merges = { runs: 0, failed: 0 };
  const acceptance = { runs: 0, failed: 0 };
  const snapshots = { runs: 0, failed: 0 };
  // The end-of-run check that is the release snapshot itself, so `all` counts that run once.
  const releases = new Set<string>();
  const mainAsRelease = { runs: 0, failed: 0 };
  const green = createGreenHealthFold();
  let bisected: GreenBisect[] = [];
  let lastMain: MainHealth['lastMain'] = null;
  const count = (counts: { runs: number; failed: number }, passed: boolean): void => {
    counts.runs += 1;
    if (!passed) counts.failed += 1;
  };
  return {
    add(event) {
      green.add(event);
      switch (event.type) {
        case 'main.checked':
          count(main, event.data.passed);
          if (releases.has(event.data.commit)) count(mainAsRelease, event.data.passed);
          lastMain = { commit: event.data.commit, passed: event.data.passed, at: event.ts };
          return;
        case 'merge.checked':
          count(merges, event.data.passed);
          return;
        case 'acceptance.checked':
          // Skipped checks ran nothing (nothing had landed): they say nothing of main.
          if (event.data.skipped === null) count(acceptance, event.data.passed);
          return;
        case 'green.checked':
          count(snapshots, event.data.passed);
          if (event.data.trigger === 'release') releases.add(event.data.commit);
          return;
        case 'green.bisected':
          bisected.push(bisectOf(event));
          // Trimmed in batches, so a run of thousands of bisects copies the list rarely.
          if (bisected.length >= 2 * BISECTS_LISTED) bisected = bisected.slice(-BISECTS_LISTED);
          return;
        default:
          // Every other event only moves the green fold's clock.
          return;
      }
    },
    result() {
      const all = {
        runs: main.runs + merges.runs + acceptance.runs + snapshots.runs - mainAsRelease.runs,
        failed: main.failed + merges.failed + acceptance.failed + snapshots.failed - mainAsRelease.failed,
      };
      return {
        main: countsOf(main),
        merges: countsOf(merges),
        acceptance: countsOf(acceptance),
        snapshots: countsOf(snapshots),
        all: countsOf(all),
        lastMain: lastMain === null ? null : { ...lastMain },
        green: green.active ? { ...green.result(), bisected: bisected.slice(-BISECTS_LISTED).map((bisect) => ({ ...bisect })) } : null,
      };
    },
  };
}

function bisectOf(event: EventOf<'green.bisected'>): GreenBisect {
  const { data } = event;
  return {
    at: event.ts,
    snapshot: data.snapshot,
    firstBad: data.firstBad,
    subject: data.subject,
    taskId: data.taskId,
    agentId: data.agentId,
    plannerTaskId: data.plannerTaskId,
    failures: data.failures.slice(0, FAILURES_LISTED),
    failureCount: data.failures.length,
    known: data.known,
  };
}

function countsOf(counts: { runs: number; failed: number }): CheckCounts {
  return { runs: counts.runs, failed: counts.failed, share: shareOf(counts.failed, counts.runs) };
}
