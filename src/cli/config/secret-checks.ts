import { settingName } from './setting-table.js';
import type { Setting } from './types.js';

/**
 * Keeping API keys out of configuration. A project file is committed and a user file is read
 * by every run, and what they give is recorded in the run's log: a key never belongs there.
 * The configuration names the variable that holds it (`api-key-env`), as `--api-key-env` does.
 * A value that looks like a key is refused without being repeated.
 */

/** Key names that ask for a credential: `api-key`, `openai_api_key`, `token`, `password`. */
const SECRET_KEY = /(^|[-_])(api[-_]?key|apikey|key|token|secret|password|passwd|credentials?)([-_]|$)/i;

/** The shapes of the providers' keys and tokens: `sk-…`, `sk-ant-…`, `xai-…`, `AIza…`, `ghp_…`. */
const KNOWN_KEY = /^(sk-|sk_|xai-|gsk_|AIza|ghp_|gho_|ghs_|github_pat_|hf_|glpat-)[A-Za-z0-9_-]{10,}$/;

/**
 * A long run of letters and digits in both cases, without the hyphens of a model's name or the
 * slashes of a path: what a key looks like.
 */
const KEY_LIKE = /^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[A-Za-z0-9_+=]{32,}$/;

const NAME_THE_VARIABLE =
  "API keys never go in colony's settings (a configuration file may be committed or shared, and settings are recorded in the run's log): keep the key in an environment variable and name that variable with api-key-env = \"OPENAI_API_KEY\" (or --api-key-env).";

/** Whether an unknown key in a file asks for a credential. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** The message for a file that tries to hold a credential under `key`. */
export function secretKeyMessage(where: string, key: string): string {
  return `${where}: "${key}" would hold a credential. ${NAME_THE_VARIABLE}`;
}

/**
 * Why `value`, given for `setting` in `where` (a file or a variable), is refused as a secret, or
 * null: a value shaped like a key, an `api-key-env` that is not a variable's name, a `base-url`
 * with a user or password in it, a `store` or an `origin` with a password in it.
 */
export function secretProblem(where: string, setting: Setting, value: unknown): string | null {
  const name = settingName(setting);
  const texts = (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string').map((text) => text.trim());
  // A key may also sit inside a command (`curl -H "Authorization: Bearer sk-…"`): every word is looked at.
  const words = texts.flatMap((text) => text.split(/[\s'"=:,;]+/));
  if (words.some((word) => KNOWN_KEY.test(word) || KEY_LIKE.test(word))) return `${where}: ${name} holds what looks like an API key (not repeated here). ${NAME_THE_VARIABLE}`;
  if (setting.key === 'api-key-env' && texts.some((text) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(text))) {
    return `${where}: api-key-env names the environment variable that holds the API key, such as "OPENAI_API_KEY", and what it was given is not a variable's name (it is not repeated here, in case it is the key itself).`;
  }
  if (setting.key === 'base-url' && texts.some((text) => /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text))) {
    return `${where}: base-url carries a user name or password (before an @ in the address). ${NAME_THE_VARIABLE}`;
  }
  if (setting.key === 'store' && texts.some((text) => /^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:[^/?#]*@/i.test(text))) {
    return `${where}: store carries a password (after the user name, before the @). Leave it out of the settings: colony's PostgreSQL driver reads it from PGPASSWORD or ~/.pgpass, or give the whole URL with --store on the command line.`;
  }
  if (setting.key === 'origin' && texts.some((text) => /^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:[^/?#]*@/i.test(text))) {
    return `${where}: origin carries a password (after the user name, before the @). Leave it out of the settings: put it in ~/.netrc, use an ssh URL with a key, or give the whole URL with --origin on the command line.`;
  }
  return null;
}

/** `text` with every word shaped like a key replaced, for showing a line of a file that may hold one (a TOML syntax error's excerpt). */
export function hideKeyLikeWords(text: string): string {
  return text.replace(/[^\s'"=:,;]+/g, (word) => (KNOWN_KEY.test(word) || KEY_LIKE.test(word) ? '[redacted]' : word));
}
