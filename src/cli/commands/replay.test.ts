import { describe, expect, it } from 'vitest';
import { momentOf } from './replay.js';

const RUN = { startsAt: Date.UTC(2026, 10, 30, 14, 0, 0), endsAt: Date.UTC(2026, 10, 30, 15, 0, 0) };

describe('colony replay --at', () => {
  it('takes a span after the start, or a time', () => {
    expect(momentOf('90s', RUN)).toBe(RUN.startsAt + 90_000);
    expect(momentOf('1h30m', RUN)).toMatch(/outside the run, which went from 2026-11-30T14:00:00.000Z to 2026-11-30T15:00:00.000Z/);
    expect(momentOf('12m', RUN)).toBe(RUN.startsAt + 720_000);
    expect(momentOf('2026-11-30T14:30:00Z', RUN)).toBe(RUN.startsAt + 1_800_000);
  });

  it('refuses a number without a unit, and words that are no time, saying what to write', () => {
    expect(momentOf('90', RUN)).toMatch(/has no unit: say 90s, 12m or 1h30m/);
    expect(momentOf('soon', RUN)).toMatch(/is neither a time .* nor a span after the run's start/);
  });
});
