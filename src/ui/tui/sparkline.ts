import { shortNumber } from './figures.js';

const BARS = '▁▂▃▄▅▆▇█';
const MINUTE_MS = 60_000;
/** The figure beside a sparkline is the rate over this many of its latest minutes. */
export const RATE_MINUTES = 5;

/**
 * Values as a row of block characters, the tallest for the largest value; zeros as the lowest
 * bar, so a quiet minute still takes its place in time. Only the last `width` values are drawn.
 */
export function sparkline(values: readonly number[], width = values.length): string {
  const shown = values.slice(-width);
  const max = Math.max(0, ...shown);
  if (max === 0) return BARS[0]?.repeat(shown.length) ?? '';
  return shown.map((value) => BARS[Math.min(BARS.length - 1, Math.round((value / max) * (BARS.length - 1)))] ?? '').join('');
}

/** One minute of a series: when it starts and what it counted. */
export interface MinutePoint {
  readonly start: number;
  readonly value: number;
}

/**
 * The rate per minute over the last five minutes of a series, up to `now`: what a sparkline's
 * last bars mean as a figure. The minute in progress counts for the part of it that has passed,
 * and the run's first minute from its start; a run younger than a minute shows its count so far
 * rather than a rate guessed from a few seconds.
 */
export function perMinute(points: readonly MinutePoint[], now: number, startedAt: number): number {
  const recent = points.slice(-RATE_MINUTES);
  const first = recent[0];
  if (first === undefined) return 0;
  const spanMs = Math.max(MINUTE_MS, now - Math.max(first.start, startedAt));
  return (recent.reduce((sum, point) => sum + point.value, 0) * MINUTE_MS) / spanMs;
}

/** A rate as a short figure: `0.4`, `3`, `12`, `12k`. */
export function rateFigure(rate: number): string {
  return rate < 10 ? rate.toFixed(1).replace(/\.0$/, '') : shortNumber(rate);
}
