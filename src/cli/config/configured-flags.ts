import { InvalidArgumentError, type Command, type Option } from 'commander';
import { readConfigEnvironment } from './config-environment.js';
import { readConfigFile, type ConfigFileKind } from './config-file.js';
import { configLocations } from './config-locations.js';
import { fileFlagInput, variableFlagInput, type FlagInput } from './flag-input.js';
import { SETTINGS, settingName } from './setting-table.js';
import { tomlLiteral } from './value-text.js';
import type { GivenValue, Setting, SettingSource } from './types.js';

/** One setting of a command as it stands after configuration: its value and where that came from. */
export interface ConfiguredSetting {
  readonly setting: Setting;
  readonly source: SettingSource;
  /** What the flag holds: its parser's result, its own default, or undefined for none. */
  readonly value: unknown;
}

/** A configuration file colony looked for, and whether it was there. */
export interface ConfigFileSeen {
  readonly file: string;
  readonly kind: ConfigFileKind;
  readonly found: boolean;
}

export type Configuration =
  | { readonly ok: true; readonly settings: readonly ConfiguredSetting[]; readonly files: readonly ConfigFileSeen[]; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly hint?: string };

/** What to do about a value refused. */
export const FIX_HINT = 'Fix it or leave it out: colony init writes a colony.toml with every setting and its default to copy from, and colony run --help says what each flag takes.';

/** How a source outranks another: a flag beats the environment, which beats the project's file, which beats the user's. */
const PRECEDENCE: readonly SettingSource['kind'][] = ['flag', 'environment', 'project-file', 'user-file', 'default'];

/**
 * Fills in the flags of a parsed `command` that the command line left out, from the `COLONY_*`
 * variables in `env`, then `<repoDir>/colony.toml`, then the user's file: each value becomes the
 * text its flag takes and goes through that flag's own parser, so it is checked (and refused)
 * exactly as the flag would be. Every value given is checked, also one a higher source
 * overrides: a broken file is said at once, not on the day its value is first used. Only the
 * settings `command` has a flag for apply (`colony resume` takes few); the others are left to
 * the commands that take them. Returns where each setting came from, or the first problem
 * found, naming the file or variable, the setting, what was given and what is allowed.
 */
export function configureCommand(command: Command, env: Readonly<Record<string, string | undefined>>, repoDir: string): Configuration {
  const locations = configLocations(env, repoDir);
  const files: ConfigFileSeen[] = [];
  const given: GivenValue[] = [];
  const read = [{ file: locations.project, kind: 'project-file' as const }, ...(locations.user === null ? [] : [{ file: locations.user, kind: 'user-file' as const }])];
  for (const { file, kind } of read) {
    const values = readConfigFile(file, kind);
    files.push({ file, kind, found: values !== null });
    if (values === null) continue;
    if (!values.ok) return values;
    given.push(...values.values);
  }
  const environment = readConfigEnvironment(env);
  if (!environment.ok) return environment;
  given.push(...environment.values);

  const settings: ConfiguredSetting[] = [];
  for (const setting of SETTINGS) {
    const option = command.options.find((each) => each.long === setting.flag);
    if (option === undefined) continue;
    const attribute = option.attributeName();
    const parsed: { readonly value: unknown; readonly source: SettingSource }[] = [];
    for (const value of given.filter((each) => each.setting === setting)) {
      const checked = checkedValue(option, value);
      if (!checked.ok) return checked;
      parsed.push({ value: checked.value, source: value.source });
    }
    if (command.getOptionValueSource(attribute) === 'cli') {
      settings.push({ setting, source: { kind: 'flag', flag: setting.flag }, value: command.getOptionValue(attribute) });
      continue;
    }
    const chosen = parsed.sort((left, right) => PRECEDENCE.indexOf(left.source.kind) - PRECEDENCE.indexOf(right.source.kind))[0];
    if (chosen === undefined) {
      settings.push({ setting, source: { kind: 'default' }, value: command.getOptionValue(attribute) });
      continue;
    }
    command.setOptionValueWithSource(attribute, chosen.value, chosen.source.kind === 'environment' ? 'env' : 'config');
    settings.push({ setting, source: chosen.source, value: chosen.value });
  }
  return { ok: true, settings, files, warnings: environment.warnings };
}

type Checked = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** A given value through its flag's parser, or the message that names where it came from, the setting, the value and what is allowed. */
function checkedValue(option: Option, given: GivenValue): Checked {
  const { setting, value, source } = given;
  const where = source.kind === 'environment' ? `${source.variable}=${String(value)}` : `${source.file}: ${settingName(setting)} = ${tomlLiteral(value)}`;
  const input = source.kind === 'environment' ? variableFlagInput(setting, source.variable, String(value)) : fileFlagInput(setting, value, source.file);
  if (!input.ok) return { ok: false, error: source.kind === 'environment' ? input.error : `${source.file}: ${input.error}` };
  try {
    return { ok: true, value: parsedBy(option, input.input) };
  } catch (error) {
    if (error instanceof InvalidArgumentError) return { ok: false, error: `${where}: ${error.message}` };
    throw error;
  }
}

/** The value `option` ends up with when given `input` on the command line, as commander would give it. */
function parsedBy(option: Option, input: FlagInput): unknown {
  if ('on' in input) {
    if (!option.isBoolean() && !option.negate) throw new Error(`${option.long ?? option.flags} is not a switch, yet a setting gives it true or false`);
    return input.on;
  }
  let value: unknown;
  for (const text of input.texts) value = option.parseArg === undefined ? text : option.parseArg(text, value);
  return value;
}
