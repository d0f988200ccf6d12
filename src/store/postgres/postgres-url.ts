/** Where a store's database is, as messages may name it: never with its password. */
export interface PostgresTarget {
  /** The URL with its password replaced by `***`. */
  readonly url: string;
  readonly host: string;
  readonly port: string;
  readonly database: string;
  readonly user: string;
}

const SCHEME = /^postgres(?:ql)?:\/\//i;
/** Any postgres URL inside a text, up to the first character a URL does not hold. */
const URL_IN_TEXT = /postgres(?:ql)?:\/\/[^\s'"<>`]+/gi;

/**
 * `url` with the password of its user replaced by `***` (`postgres://user:***@host/db`); a URL
 * without a password, or any other text, comes back as it was. The user part ends at the last
 * `@` before the query, so a password holding an unescaped `@` or `/` is hidden whole.
 */
export function redactPostgresUrl(url: string): string {
  const scheme = SCHEME.exec(url);
  if (scheme === null) return url;
  const start = scheme[0].length;
  const queryAt = url.slice(start).search(/[?#]/);
  const end = queryAt === -1 ? url.length : start + queryAt;
  const at = url.lastIndexOf('@', end - 1);
  if (at < start) return url;
  const colon = url.indexOf(':', start);
  if (colon === -1 || colon > at) return url;
  return `${url.slice(0, colon + 1)}***${url.slice(at)}`;
}

/**
 * `text` with every postgres URL's password replaced by `***`, and every occurrence of
 * `password` itself (also percent-encoded) besides, for messages that may quote a driver's or
 * a server's words: nothing colony writes or throws holds the password.
 */
export function redactPostgresText(text: string, password = ''): string {
  let redacted = text.replace(URL_IN_TEXT, (url) => redactPostgresUrl(url));
  if (password.length > 0) {
    for (const form of new Set([password, encodeURIComponent(password)])) redacted = redacted.split(form).join('***');
  }
  return redacted;
}

/**
 * `url` parsed, or undefined when it is not a postgres URL. A URL with a user but no host
 * (`postgres://colony@/colony?host=/run/postgresql`, the host in the query) is read as
 * node-postgres reads it.
 */
function parsePostgresUrl(url: string): URL | undefined {
  if (!SCHEME.test(url)) return undefined;
  for (const candidate of [url, url.replace('@/', '@localhost/')]) {
    try {
      return new URL(candidate);
    } catch {
      // Not this way: try the next reading, if any.
    }
  }
  return undefined;
}

/** The password a postgres URL carries, decoded, or '' when it carries none or cannot be read. */
export function passwordOf(url: string): string {
  const parsed = parsePostgresUrl(url);
  if (parsed === undefined) return '';
  try {
    return decodeURIComponent(parsed.password);
  } catch {
    return parsed.password;
  }
}

/**
 * Where `url` points, for messages: host, port, database and user as the URL gives them
 * (PostgreSQL's defaults where it leaves one out), and the URL without its password. Throws,
 * without quoting the URL's password, when `url` is not a postgres URL.
 */
export function postgresTarget(url: string): PostgresTarget {
  const parsed = parsePostgresUrl(url);
  if (parsed === undefined) {
    throw new TypeError(
      // Whatever it is, a user:password part is hidden as in a postgres URL.
      `The PostgreSQL store takes a URL such as postgres://user:password@host:5432/database, got ${url.replace(/\/\/([^:@/\s]*):[^\s]*@/, '//$1:***@')}.`,
    );
  }
  const user = safelyDecoded(parsed.username);
  return {
    url: redactPostgresUrl(url),
    host: parsed.searchParams.get('host') ?? (parsed.hostname === '' ? 'localhost' : parsed.hostname),
    port: parsed.port === '' ? '5432' : parsed.port,
    database: safelyDecoded(parsed.pathname.slice(1)) || user,
    user,
  };
}

/** `text` percent-decoded, or as it is when it holds a stray `%`. */
function safelyDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** How messages name a store: `database "colony" on db.example:5432 (postgres://colony:***@db.example/colony)`. */
export function describeTarget(target: PostgresTarget): string {
  return `database "${target.database}" on ${target.host}:${target.port} (${target.url})`;
}
