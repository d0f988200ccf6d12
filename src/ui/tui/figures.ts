/** Short figures for narrow columns: 950, 12.3k, 4.1M. */
export function shortNumber(value: number): string {
  if (value < 1_000) return String(Math.round(value));
  if (value < 1_000_000) return `${trim(value / 1_000)}k`;
  if (value < 1_000_000_000) return `${trim(value / 1_000_000)}M`;
  return `${trim(value / 1_000_000_000)}G`;
}

/** A span of time in the largest units that fit: 42s, 3m05s, 2h14m, 3d04h. */
export function shortDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d${String(hours % 24).padStart(2, '0')}h`;
}

export function dollars(amount: number): string {
  return amount < 10 ? `$${amount.toFixed(2)}` : `$${Math.round(amount)}`;
}

/** A clock time, HH:MM:SS in UTC, as the log's lines show it. */
export function clockTime(ts: number): string {
  return new Date(ts).toISOString().slice(11, 19);
}

/** Cuts `text` to `width` characters on one line, marking the cut; indentation stays. */
export function fit(text: string, width: number): string {
  const line = text.replace(/[\r\n\t]+/g, ' ');
  if (width <= 0) return '';
  return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
}

function trim(value: number): string {
  return value < 10 ? value.toFixed(1).replace(/\.0$/, '') : String(Math.round(value));
}
