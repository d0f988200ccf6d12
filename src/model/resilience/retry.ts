import { APICallError } from '@ai-sdk/provider';
import type { ModelError } from '../chat-model.js';
import { classifyHttpError, classifyStreamErrorObject } from './http-error-classification.js';
import { HtmlAnswerError } from './html-answers.js';
import type { ErrorContext } from './http-error-classification.js';
import { abortedError, modelError } from '../model-error.js';

/** How a model call is retried. Every field has a default; see DEFAULT_RETRY_POLICY. */
export interface RetryPolicy {
  /** Attempts in total, the first one included. */
  readonly maxAttempts: number;
  /** The backoff ceiling of the first retry; it doubles with every further attempt. */
  readonly baseDelayMs: number;
  /** The backoff ceiling never grows past this. */
  readonly maxDelayMs: number;
  /** The longest wait a provider's retry-after can ask for and get. */
  readonly maxRetryAfterMs: number;
  /** A stream silent for longer than this is abandoned and retried. */
  readonly stallTimeoutMs: number;
  /**
   * Unreadable answers are retried, but only this many times: a provider that keeps sending
   * garbage will not start making sense on the sixth try.
   */
  readonly maxGarbageRetries: number;
}

export type { ErrorContext } from './http-error-classification.js';

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 600_000,
  stallTimeoutMs: 120_000,
  maxGarbageRetries: 2,
};

export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return { ...DEFAULT_RETRY_POLICY, ...overrides };
}

/**
 * The wait before retrying after failed attempt number `attempt` (1-based): full jitter,
 * `random() * min(maxDelayMs, baseDelayMs * 2^(attempt-1))`. A provider's retry-after is a
 * floor, itself capped by `maxRetryAfterMs`.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number,
  retryAfterMs: number | null,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === null) return jittered;
  return Math.min(policy.maxRetryAfterMs, Math.max(retryAfterMs, jittered));
}


const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const NETWORK_MESSAGE = /fetch failed|failed to fetch|socket hang up|other side closed|terminated|network/i;
const GARBAGE_ERROR_NAMES = new Set([
  'AI_JSONParseError',
  'AI_TypeValidationError',
  'AI_InvalidResponseDataError',
  'AI_EmptyResponseBodyError',
]);
const GARBAGE_MESSAGE = /^(JSON parsing failed|Type validation failed|Invalid JSON response)/;

/**
 * What went wrong with a model call, in the terms a retry policy acts on. Accepts anything a
 * provider throws or puts in an `error` stream part: the SDK's APICallError (HTTP status,
 * headers, body), parse and validation errors from an unreadable answer, network errors from
 * fetch, a web page where the answer should be (HtmlAnswerError), AbortError, and the plain
 * error objects providers send inside a stream.
 */
export function classifyError(error: unknown, context: ErrorContext = {}): ModelError {
  if (isAbortError(error)) {
    return abortedError();
  }
  const page = errorChain(error).find((link): link is HtmlAnswerError => link instanceof HtmlAnswerError);
  if (page !== undefined) return modelError('unreachable', page.message, page.status, false);
  if (isTimeoutError(error)) {
    return modelError('timeout', `The model call timed out: ${messageOf(error)}`, null, true);
  }
  if (looksLikeGarbage(error)) {
    return modelError('garbage', `The provider sent an answer that could not be read: ${messageOf(error)}`, null, true);
  }
  if (APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 400) {
    return classifyHttpError(error, error.statusCode, context);
  }
  const blocked = blockedPortFailure(error);
  if (blocked !== null) return blocked;
  const connection = connectionFailure(error);
  if (connection !== null) return connection;
  if (APICallError.isInstance(error)) {
    // A 2xx answer whose body could not be processed, and not for a network reason.
    return modelError('garbage', `The provider sent an answer that could not be read: ${error.message}`, null, true);
  }
  if (!(error instanceof Error) && typeof error === 'object' && error !== null) {
    return classifyStreamErrorObject(error, context);
  }
  return modelError('bad-request', `The model call failed unexpectedly: ${messageOf(error)}`, null, false);
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'ResponseAborted');
}

function isTimeoutError(error: unknown): boolean {
  if (error instanceof Error && error.name === 'TimeoutError') return true;
  return errorChain(error).some((link) => TIMEOUT_CODES.has(codeOf(link)));
}

function looksLikeGarbage(error: unknown): boolean {
  return errorChain(error).some(
    (link) => GARBAGE_ERROR_NAMES.has(link.name) || GARBAGE_MESSAGE.test(link.message),
  );
}

function connectionFailure(error: unknown): ModelError | null {
  const chain = errorChain(error);
  const failed = chain.some((link) => NETWORK_CODES.has(codeOf(link)) || NETWORK_MESSAGE.test(link.message));
  if (!failed) return null;
  // Wrappers often repeat their cause's message; say each thing once.
  let detail = '';
  for (const link of chain) {
    if (link.message !== '' && !detail.includes(link.message)) detail += detail === '' ? link.message : `: ${link.message}`;
  }
  return modelError('network', `The connection to the provider failed: ${detail}`, null, true);
}

/**
 * Node's fetch refuses, before connecting, a URL whose port is on the fetch standard's list of
 * blocked ports (1, 25, 6000 and some eighty others), with only the words "bad port". No
 * server is involved, so no retry or wait can help: the address must change.
 */
function blockedPortFailure(error: unknown): ModelError | null {
  const chain = errorChain(error);
  if (!chain.some((link) => BAD_PORT_MESSAGE.test(link.message))) return null;
  const port = requestPort(chain);
  const which = port === null ? 'the port of its address' : `port ${port}`;
  return modelError(
    'unreachable',
    `Node's fetch refuses to connect to ${which}: it is one of the ports the fetch standard blocks in every client, ` +
      'so no request left this machine. Serve the API on another port and pass that address in --base-url.',
    null,
    false,
  );
}

/** undici's whole message for a port on the blocked list. */
const BAD_PORT_MESSAGE = /^bad port$/i;

/** The explicit port of the URL the SDK was calling, when one of the errors names it. */
function requestPort(chain: readonly Error[]): string | null {
  for (const link of chain) {
    if (!APICallError.isInstance(link)) continue;
    try {
      const { port } = new URL(link.url);
      return port === '' ? null : port;
    } catch {
      return null;
    }
  }
  return null;
}

/** The error and its causes, outermost first. */
function errorChain(error: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = error;
  while (current instanceof Error && !chain.includes(current)) {
    chain.push(current);
    current = current.cause;
  }
  return chain;
}

function codeOf(error: Error): string {
  const code: unknown = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
