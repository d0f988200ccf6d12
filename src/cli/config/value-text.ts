import type { ValueKind } from './types.js';

/**
 * Values written back as a configuration file would hold them (TOML literals), for `colony
 * config` and the template `colony init` writes, and described in words for error messages.
 */

const SIZE_UNITS: readonly (readonly [string, number])[] = [
  ['T', 2 ** 40],
  ['G', 2 ** 30],
  ['M', 2 ** 20],
  ['K', 2 ** 10],
];

/** A number of bytes in the largest unit that divides it: `2G`, `512M`, `1000`. */
export function sizeText(bytes: number): string {
  const unit = SIZE_UNITS.find(([, size]) => bytes % size === 0);
  return unit === undefined ? String(bytes) : `${bytes / unit[1]}${unit[0]}`;
}

/** Steps for each kind of agent: one number or `"off"` when both are the same, else a table. */
export function stepsLiteral(steps: { readonly planner: number | null; readonly worker: number | null }): string {
  const one = (value: number | null) => (value === null ? '"off"' : String(value));
  return steps.planner === steps.worker ? one(steps.planner) : `{ planner = ${one(steps.planner)}, worker = ${one(steps.worker)} }`;
}

/** When the green loop snapshots main, as `--green-every` takes it: `"10,10m"`, `"15m"`, `"off"`. */
export function everyLiteral(every: { readonly everyCommits: number | null; readonly everyMs: number | null }): string {
  const parts = [every.everyCommits === null ? null : String(every.everyCommits), every.everyMs === null ? null : `${Number((every.everyMs / 60_000).toFixed(4))}m`];
  const text = parts.filter((part) => part !== null).join(',');
  return JSON.stringify(text === '' ? 'off' : text);
}

/** Any TOML value as a literal: strings quoted, arrays and tables inline. */
export function tomlLiteral(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlLiteral).join(', ')}]`;
  if (value instanceof Date) return value.toISOString();
  if (isTable(value)) return `{ ${Object.entries(value).map(([key, item]) => `${bareOrQuoted(key)} = ${tomlLiteral(item)}`).join(', ')} }`;
  return String(value);
}

/**
 * The value a flag's parser returned, as the file would write it. The parsed shapes are those
 * of `run`'s flags: sizes in bytes, steps by kind, tokens by model, the green loop's counts.
 */
export function parsedLiteral(kind: ValueKind, value: unknown): string {
  if (kind === 'size' && typeof value === 'number') return JSON.stringify(sizeText(value));
  if (kind === 'steps' && isTable(value)) return stepsLiteral({ planner: numberOrNull(value['planner']), worker: numberOrNull(value['worker']) });
  if (kind === 'every' && isTable(value)) return everyLiteral({ everyCommits: numberOrNull(value['everyCommits']), everyMs: numberOrNull(value['everyMs']) });
  if (kind === 'tokens' && isTable(value)) {
    const all = numberOrNull(value['all']);
    return all !== null ? String(all) : tomlLiteral(value['byModel'] ?? {});
  }
  return tomlLiteral(value);
}

/** What a file gave, in words, for a message that says it is the wrong kind: `the string "four"`, `a table`. */
export function describeGiven(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `the number ${String(value)}`;
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `the array ${tomlLiteral(value)}`;
  if (value instanceof Date) return `the date ${value.toISOString()}`;
  if (isTable(value)) return `the table ${tomlLiteral(value)}`;
  return String(value);
}

export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

function bareOrQuoted(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}
