import { describe, expect, it } from 'vitest';
import type { PlannedChange } from './planned-change.js';
import { createTally, figuresOf, recordFailure } from './run-tally.js';

function fileChange(merger: number, number: number): PlannedChange {
  return { kind: 'file', merger, number, path: `m${merger}/c${number}.txt`, text: '' };
}

describe('figuresOf', () => {
  it('counts landings within the window, the last quarter apart, and the mergers that landed', () => {
    const tally = createTally(3);
    for (const [at, merger] of [[1_000, 0], [5_000, 1], [8_000, 0], [9_500, 1], [10_000, 0], [10_400, 2]] as const) {
      tally.landings.push({ at, change: fileChange(merger, at) });
    }
    tally.retries = 3;
    tally.resolvedMechanically = 2;
    tally.resolvedByAgent = 1;
    for (const time of tally.mergers) Object.assign(time, { activeMs: 10_000, waitMs: 2_500, handoverMs: 5_000 });
    recordFailure(tally, 'one failure');
    const figures = figuresOf(tally, { mode: 'self-merge', shared: 0.1, insertShare: 0, resolveMs: 10_000, seed: 1 }, 10_000);
    expect(figures).toMatchObject({
      seconds: 10,
      landed: 5,
      commitsPerHour: 1_800,
      lastQuarterPerHour: (3 / 2.5) * 3_600,
      mergersLanded: 2,
      landedAfterWindow: 1,
      retriesPerCommit: 0.5,
      conflicts: 3,
      waitShare: 0.25,
      handoverShare: 0.5,
      waitSource: 'waitMs',
      failedMerges: 1,
      failures: ['one failure'],
    });
  });

  it('reports zeros, not NaN, for a run where nothing landed', () => {
    const figures = figuresOf(createTally(2), { mode: 'integrator', shared: 0, insertShare: 0, resolveMs: 0, seed: 1 }, 5_000);
    expect(figures).toMatchObject({ landed: 0, commitsPerHour: 0, retriesPerCommit: 0, waitShare: 0, mergersLanded: 0, waitSource: 'queue' });
  });
});
