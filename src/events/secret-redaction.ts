/**
 * Keeping secrets out of what colony records and prints. API keys reach colony through its
 * environment and, by mistake, through a `--base-url` such as `https://user:key@host/v1`; they
 * leak back out when a provider's error message repeats a request header or a URL. Everything
 * on its way to the event log, the task store or the terminal passes through a redactor.
 */

/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

export interface SecretRedactor {
  /** `text` with every known secret, and the user and password of every URL in it, replaced by `[redacted]`. */
  redactText(text: string): string;
  /** A copy of a JSON-like value with every string in it (keys of objects included) redacted. */
  redactValue<Value>(value: Value): Value;
}

/** Values shorter than this are not treated as secrets: redacting `1` or `true` everywhere would garble everything. */
const MIN_SECRET_LENGTH = 8;

/** Names of environment variables that hold credentials by convention. */
const SECRET_NAME = /(?:API_?KEY|ACCESS_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

// `scheme://user:password@` or `scheme://token@`: the userinfo part of a URL, whatever follows.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi;

/**
 * The values of the variables in `env` that hold credentials: those named like a key, token,
 * secret or password, and every variable in `named` (the one given with `--api-key-env`,
 * whatever it is called).
 */
export function secretsInEnvironment(env: Readonly<Record<string, string | undefined>>, named: readonly string[] = []): string[] {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(name) || named.includes(name)) {
      const trimmed = value.trim();
      if (trimmed.length >= MIN_SECRET_LENGTH) secrets.add(trimmed);
    }
  }
  return [...secrets];
}

/** `text` with the userinfo of every URL in it replaced: `https://[redacted]@host/…`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`);
}

/**
 * A redactor for `secrets` (values, such as from `secretsInEnvironment`) and for credentials in
 * URLs, which it finds without being told. Longer secrets are replaced first, so one that
 * contains another is still replaced whole.
 */
export function createSecretRedactor(secrets: readonly string[]): SecretRedactor {
  const known = [...new Set(secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH))].sort((left, right) => right.length - left.length);
  const redactText = (text: string): string => {
    let redacted = redactUrlCredentials(text);
    for (const secret of known) {
      if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
    }
    return redacted;
  };
  const redactValue = <Value>(value: Value): Value => redactUnknown(value, redactText) as Value;
  return { redactText, redactValue };
}

function redactUnknown(value: unknown, redactText: (text: string) => string): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map((item) => redactUnknown(item, redactText));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[redactText(key)] = redactUnknown(item, redactText);
    return copy;
  }
  return value;
}
