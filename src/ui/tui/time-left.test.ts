import { describe, expect, it } from 'vitest';
import { roughDuration, taskProgress } from './time-left.js';

const START = Date.UTC(2026, 0, 1, 9, 0, 0);
const minutes = (count: number) => START + count * 60_000;

describe('the tasks closed and the time left', () => {
  it('divides the tasks not closed by the rate they closed at since the start', () => {
    // Four closed in the first 8 minutes: half a task a minute, and 6 more take 12 minutes.
    const progress = taskProgress({ closedAt: [minutes(1), minutes(3), minutes(5), minutes(7)], total: 10, now: minutes(8), startedAt: START, running: true });
    expect(progress).toEqual({ closed: 4, total: 10, share: 0.4, leftMs: 12 * 60_000 });
  });

  it('counts only the last ten minutes, so a run that sped up says so', () => {
    // Two closed slowly long ago; three in the last ten minutes, the rate it goes at now.
    const closedAt = [minutes(2), minutes(15), minutes(32), minutes(35), minutes(38)];
    const progress = taskProgress({ closedAt, total: 8, now: minutes(40), startedAt: START, running: true });
    expect(progress.closed).toBe(5);
    expect(progress.leftMs).toBe(10 * 60_000);
  });

  it('makes no estimate before three tasks closed in the window', () => {
    const early = taskProgress({ closedAt: [minutes(1), minutes(2)], total: 10, now: minutes(3), startedAt: START, running: true });
    expect(early).toEqual({ closed: 2, total: 10, share: 0.2, leftMs: null });
    // Three closed, but two of them more than ten minutes ago.
    const stale = taskProgress({ closedAt: [minutes(1), minutes(2), minutes(20)], total: 10, now: minutes(25), startedAt: START, running: true });
    expect(stale.leftMs).toBeNull();
  });

  it('makes none once every task closed, nor after the run ended', () => {
    const closedAt = [minutes(1), minutes(2), minutes(3)];
    expect(taskProgress({ closedAt, total: 3, now: minutes(4), startedAt: START, running: true })).toEqual({ closed: 3, total: 3, share: 1, leftMs: null });
    expect(taskProgress({ closedAt, total: 6, now: minutes(4), startedAt: START, running: false }).leftMs).toBeNull();
  });

  it('says 0 of 0 without dividing by nothing', () => {
    expect(taskProgress({ closedAt: [], total: 0, now: minutes(1), startedAt: START, running: true })).toEqual({ closed: 0, total: 0, share: 0, leftMs: null });
  });

  it('writes an estimate no more precisely than it is', () => {
    expect(roughDuration(20_000)).toBe('<1m');
    expect(roughDuration(7 * 60_000 + 20_000)).toBe('~7m');
    expect(roughDuration(130 * 60_000)).toBe('~2h10m');
  });
});
