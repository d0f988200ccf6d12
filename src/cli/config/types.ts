/** The tables of a configuration file; every other setting sits at its top. */
export type TableName = 'budget' | 'sandbox' | 'freshness' | 'green';

/**
 * What a setting takes in a file, and so how its value becomes the text its flag takes:
 * - `text`: a string, passed as it is.
 * - `path`: a string naming a file, relative to the configuration file that names it.
 * - `whole`: an integer. `number`: an integer or a float.
 * - `size`: a size such as "2G", or an integer of bytes.
 * - `switch`: true or false, for a flag that turns something on or (`--no-...`) off.
 * - `hosts`: a host, or an array of them.
 * - `files`: a path from the repository's root, or an array of them (not relative to the file: they name files in git).
 * - `steps`: a number of steps, "off", or a table `{ planner = 40, worker = "off" }`.
 * - `tokens`: a number of tokens, or a table of them by model, `{ "openai:gpt-5" = 400000 }`.
 * - `every`: "10,10m", "15m", "off", or an integer of commits.
 */
export type ValueKind = 'text' | 'path' | 'whole' | 'number' | 'size' | 'switch' | 'hosts' | 'files' | 'steps' | 'tokens' | 'every';

/** One setting a configuration file, a `COLONY_*` variable and a flag of `colony run` can each give. */
export interface Setting {
  /** Its name in its table, or at the top of the file: `workers`, or `usd` in `[budget]`. */
  readonly key: string;
  readonly table?: TableName;
  /** The flag it stands for, as `colony run --help` spells it: `--workers`, `--no-shared-deps`. */
  readonly flag: string;
  readonly kind: ValueKind;
  /** One line: what it does. */
  readonly meaning: string;
  /**
   * The default as the file would write it, for a setting whose flag has none of its own (its
   * default is filled in further down, from the run settings or the sandbox's limits).
   */
  readonly defaultLiteral?: string;
  /** For a setting with no default at all: what leaving it out means, and a value to show. */
  readonly unset?: { readonly means: string; readonly example: string };
}

/** Where the value of a setting came from, highest precedence first. */
export type SettingSource =
  | { readonly kind: 'flag'; readonly flag: string }
  | { readonly kind: 'environment'; readonly variable: string }
  | { readonly kind: 'project-file'; readonly file: string }
  | { readonly kind: 'user-file'; readonly file: string }
  | { readonly kind: 'default' };

/** A value a file or a variable gives for one setting, before it is checked. */
export interface GivenValue {
  readonly setting: Setting;
  /** What the TOML held (a string, number, boolean, array or table), or the variable's text. */
  readonly value: unknown;
  readonly source: Exclude<SettingSource, { kind: 'flag' } | { kind: 'default' }>;
}

/** A file's or the environment's values, or what is wrong with them. */
export type GivenValues = { readonly ok: true; readonly values: readonly GivenValue[] } | { readonly ok: false; readonly error: string; readonly hint?: string };
