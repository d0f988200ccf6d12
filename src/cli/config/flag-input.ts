import { dirname, resolve } from 'node:path';
import { settingName } from './setting-table.js';
import { describeGiven, isTable } from './value-text.js';
import type { Setting, ValueKind } from './types.js';

/**
 * What a flag is handed for a value from a file or a variable: the texts its parser takes, one
 * per use of the flag (`--network-allow` may be given several), or the state of a switch.
 * Turning a TOML value into flag text is all this does; the flag's own parser then checks it,
 * so a value in a file is refused or taken exactly as it would be on the command line.
 */
export type FlagInput = { readonly texts: readonly string[] } | { readonly on: boolean };

export type FlagInputResult = { readonly ok: true; readonly input: FlagInput } | { readonly ok: false; readonly error: string };

/** What each kind takes, for the message that says a value is of the wrong kind. */
const EXPECTED: Readonly<Record<ValueKind, string>> = {
  text: 'a string (in quotes)',
  path: 'a file name (a string, relative to the file it is in)',
  whole: 'a whole number',
  number: 'a number',
  size: 'a size such as "2G" or "500M", or a number of bytes',
  switch: 'true or false',
  hosts: 'a host or an array of hosts, such as ["registry.npmjs.org", "*.github.com"]',
  files: 'a path or an array of paths from the repository\'s root, such as ["uv.lock", "pyproject.toml"]',
  steps: 'a number of steps, "off", or one per kind such as { planner = 40, worker = "off" }',
  tokens: 'a number of tokens, or a table of them by model such as { "openai:gpt-5" = 400000, sim = 32000 }',
  every: 'a string such as "10,10m", "15m" or "off", or a number of commits',
};

/** The flag input for a value read from the TOML file `file`, or why it is the wrong kind. */
export function fileFlagInput(setting: Setting, value: unknown, file: string): FlagInputResult {
  const texts = fileTexts(setting.kind, value, file);
  if (texts === null) return { ok: false, error: `${settingName(setting)} takes ${EXPECTED[setting.kind]}, got ${describeGiven(value)}.` };
  return { ok: true, input: texts };
}

/** The flag input for the text of a `COLONY_*` variable: the flag's own text, or true/false for a switch. */
export function variableFlagInput(setting: Setting, variable: string, text: string): FlagInputResult {
  if (setting.kind !== 'switch') return { ok: true, input: { texts: [text] } };
  if (/^(true|1|yes|on)$/i.test(text.trim())) return { ok: true, input: { on: true } };
  if (/^(false|0|no|off)$/i.test(text.trim())) return { ok: true, input: { on: false } };
  return { ok: false, error: `${variable} takes true or false (or 1 or 0), got "${text}".` };
}

function fileTexts(kind: ValueKind, value: unknown, file: string): FlagInput | null {
  const text = typeof value === 'string' ? value : null;
  const count = typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
  const whole = typeof value === 'number' && Number.isInteger(value) ? String(value) : null;
  const one = (given: string | null): FlagInput | null => (given === null ? null : { texts: [given] });
  switch (kind) {
    case 'text':
      return one(text);
    case 'path':
      return one(text === null ? null : resolve(dirname(file), text));
    case 'whole':
      return one(whole);
    case 'number':
      return one(count);
    case 'size':
    case 'every':
      return one(text ?? whole);
    case 'switch':
      return typeof value === 'boolean' ? { on: value } : null;
    case 'hosts':
    case 'files':
      if (Array.isArray(value)) {
        const items = value.filter((item): item is string => typeof item === 'string');
        return items.length === value.length && items.length > 0 ? { texts: items } : null;
      }
      return one(text);
    case 'steps':
      return one(text ?? whole ?? pairs(value, (steps) => (typeof steps === 'number' || steps === 'off' ? String(steps) : null)));
    case 'tokens':
      return one(text ?? whole ?? pairs(value, (tokens) => (typeof tokens === 'number' ? String(tokens) : null)));
  }
}

/** A table as the flag's `name=value,name=value`, or null when a value is not one `each` takes. */
function pairs(value: unknown, each: (item: unknown) => string | null): string | null {
  if (!isTable(value)) return null;
  const entries = Object.entries(value).map(([name, item]) => [name, each(item)] as const);
  if (entries.length === 0 || entries.some(([, item]) => item === null)) return null;
  return entries.map(([name, item]) => `${name}=${item ?? ''}`).join(',');
}
