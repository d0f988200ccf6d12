const BARS = '▁▂▃▄▅▆▇█';

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
