/** How deep `isConnectionFailure` follows `cause` and an AggregateError's `errors`. */
const MAX_DEPTH = 4;

/** What the operating system says when a server cannot be reached or a connection breaks. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOENT', // a Unix socket that is not there yet: the server has not started
]);

/**
 * SQLSTATEs of a server that is going away or not ready: an administrator or a crash ended the
 * session (57P01, 57P02), the server is starting or stopping (57P03), or it has no connection
 * to spare (53300). Class 08 is every connection exception.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres says, without a code, when the socket under a client closed. */
const CLOSED_CONNECTION = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i;

function codeOf(error: object): string {
  return 'code' in error && typeof error.code === 'string' ? error.code : '';
}

/**
 * True when `error` says the database could not be reached, or the connection to it broke,
 * rather than that a statement was refused: what is worth trying again on a new connection.
 */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  const code = codeOf(error);
  if (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')) return true;
  if (error instanceof Error && code === '' && CLOSED_CONNECTION.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some((each) => isConnectionFailure(each, depth + 1))) return true;
  return 'cause' in error && isConnectionFailure(error.cause, depth + 1);
}

/**
 * True when PostgreSQL rolled the transaction back to break a deadlock (40P01) or a
 * serialization conflict (40001): nothing of it was made, and the same work tried again
 * usually goes through. Two transactions that change several tasks (renewing a holder's
 * leases, an andon's walk down the tree) can lock the same rows in opposite orders.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? codeOf(error) : '';
  return code === '40P01' || code === '40001';
}

/** True when `error` is PostgreSQL refusing a row a unique index already holds (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && codeOf(error) === '23505';
}

/**
 * The store cannot be used as it was given: the server cannot be reached or refused the login,
 * its schema holds what colony cannot use, or the address names no usable schema. The message
 * says what is wrong and what to do, without the password: a command prints it as it is.
 */
export class PostgresStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PostgresStoreError';
  }
}

/**
 * A connection that broke while its transaction's COMMIT was on its way: the change may or may
 * not have been made, so it is not tried again on its own (a second claim or delivery could
 * follow a first that did land).
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'CommitOutcomeUnknownError';
  }
}

/**
 * `error` with its message (and the stack that repeats it) passed through `redact`, so that
 * nothing carried on as a `cause` quotes the password either. Anything but an Error is replaced
 * by an Error with its redacted text.
 */
export function redactedError(error: unknown, redact: (text: string) => string): Error {
  if (!(error instanceof Error)) return new Error(redact(String(error)));
  error.message = redact(error.message);
  if (error.stack !== undefined) error.stack = redact(error.stack);
  return error;
}
