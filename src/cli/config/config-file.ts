import { readFileSync } from 'node:fs';
import { parse, TomlError } from 'smol-toml';
import { errorMessage } from '../../errors/error-message.js';
import { closestName } from './closest-name.js';
import { hideKeyLikeWords, isSecretKey, secretKeyMessage, secretProblem } from './secret-checks.js';
import { SETTINGS, TABLES, settingName } from './setting-table.js';
import { isTable } from './value-text.js';
import type { GivenValue, GivenValues, Setting, TableName } from './types.js';

/** Which of the two files: the repository's (committed, shared) or the user's own. */
export type ConfigFileKind = 'project-file' | 'user-file';

/**
 * The settings a configuration file gives, by name, or what is wrong with it: TOML that does
 * not parse (with its line and column), a key that is no setting (with the closest one and
 * every one allowed there), a table where a value belongs, a credential. Values are not
 * checked here but by the flags they stand for (see configured-flags.ts). Null when the file
 * does not exist.
 */
export function readConfigFile(file: string, kind: ConfigFileKind): GivenValues | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { ok: false, error: `${file} cannot be read: ${errorMessage(error)}.` };
  }
  let document: Record<string, unknown>;
  try {
    document = parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const [reason = '', ...excerpt] = error.message.replace(/^Invalid TOML document: /, '').split('\n');
    return {
      ok: false,
      error: `${file}, line ${error.line}, column ${error.column}: this is not valid TOML: ${reason}.`,
      hint: `${hideKeyLikeWords(excerpt.filter((line) => line.trim() !== '').join('\n'))}\n(colony init writes a colony.toml with every setting, to copy from.)`,
    };
  }
  return settingsOf(file, kind, document);
}

function settingsOf(file: string, kind: ConfigFileKind, document: Record<string, unknown>): GivenValues {
  const values: GivenValue[] = [];
  for (const [key, value] of Object.entries(document)) {
    const table = TABLES.find((each) => each.name === key);
    if (table === undefined) {
      const found = inScope(file, undefined, key);
      if (!found.ok) return found;
      values.push({ setting: found.setting, value, source: { kind, file } });
      continue;
    }
    if (!isTable(value)) {
      return { ok: false, error: `${file}: ${key} is a table of settings, not a value: write them under [${key}] (${keysOf(table.name).join(', ')}).` };
    }
    for (const [inner, innerValue] of Object.entries(value)) {
      const found = inScope(file, table.name, inner);
      if (!found.ok) return found;
      values.push({ setting: found.setting, value: innerValue, source: { kind, file } });
    }
  }
  for (const given of values) {
    const secret = secretProblem(file, given.setting, given.value);
    if (secret !== null) return { ok: false, error: secret };
  }
  return { ok: true, values };
}

type Found = { readonly ok: true; readonly setting: Setting } | { readonly ok: false; readonly error: string; readonly hint: string };

/** The setting `key` names at the top of the file or in `table`, or the message for a key that names none. */
function inScope(file: string, table: TableName | undefined, key: string): Found {
  const setting = SETTINGS.find((each) => each.table === table && each.key === key);
  if (setting !== undefined) return { ok: true, setting };
  const where = table === undefined ? 'at the top of the file' : `in [${table}]`;
  const allowed = table === undefined ? [...keysOf(undefined), ...TABLES.map((each) => `[${each.name}]`)] : keysOf(table);
  const hint = `The settings ${where}: ${allowed.join(', ')}.`;
  if (isSecretKey(key)) return { ok: false, error: secretKeyMessage(file, table === undefined ? key : `${table}.${key}`), hint };
  return { ok: false, error: `${file}: there is no setting "${key}" ${where}${suggestionFor(key, table)}`, hint };
}

/** How a message about an unknown key ends: where the key belongs, the closest name, or a full stop. */
function suggestionFor(key: string, table: TableName | undefined): string {
  const elsewhere = SETTINGS.find((each) => each.key === key);
  if (elsewhere !== undefined) {
    return `; it belongs ${elsewhere.table === undefined ? 'at the top of the file, before any table' : `in [${elsewhere.table}]`} (${settingName(elsewhere)}).`;
  }
  const names = table === undefined ? [...keysOf(undefined), ...TABLES.map((each) => each.name)] : keysOf(table);
  const closest = closestName(key, names);
  if (closest === null) return '.';
  return table === undefined && TABLES.some((each) => each.name === closest) ? `; did you mean the table [${closest}]?` : `; did you mean "${closest}"?`;
}

function keysOf(table: TableName | undefined): string[] {
  return SETTINGS.filter((setting) => setting.table === table).map((setting) => setting.key);
}
