/** A column of a text table: its heading, and whether numbers in it line up on the right. */
export interface Column {
  readonly heading: string;
  readonly right?: boolean;
}

/**
 * Rows as lines of aligned columns under their headings, two spaces apart, each line indented
 * by `indent`. The last column is not padded, so long text there (a title, a command) does not
 * drag trailing spaces after it.
 */
export function tableLines(columns: readonly Column[], rows: readonly (readonly string[])[], indent = '  '): string[] {
  const widths = columns.map((column, index) => Math.max(column.heading.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent +
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        const width = widths[index] ?? 0;
        if (column.right === true) return cell.padStart(width);
        return index === columns.length - 1 ? cell : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((column) => column.heading)), ...rows.map(line)];
}

/** A duration for a person: "850ms", "12.3s", "4m 05s", "2h 03m". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1000);
  const pad = (value: number) => String(value).padStart(2, '0');
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)}m ${pad(totalSeconds % 60)}s`;
  return `${Math.floor(totalSeconds / 3600)}h ${pad(Math.floor((totalSeconds % 3600) / 60))}m`;
}

/**
 * A whole number with thousands separators, `12,345`. Written out rather than asked of
 * `toLocaleString`, whose first call loads the locale data: about 10 ms of CPU on every
 * `colony status`, a fifth of what a bare Node start costs.
 */
export function count(value: number): string {
  const digits = String(Math.round(Math.abs(value)));
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ',');
  return value < 0 ? `-${grouped}` : grouped;
}

/** A share from 0 to 1 as a percentage. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(share > 0 && share < 0.1 ? 1 : 0)}%`;
}

/** Text on one line, cut to `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
