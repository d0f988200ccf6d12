import type { APICallError } from '@ai-sdk/provider';
import type { ModelError } from '../chat-model.js';
import { modelError } from '../model-error.js';
import { isHtmlContentType } from './html-answers.js';

/** How providers word "the prompt does not fit the context window". */
const CONTEXT_WINDOW_PATTERN =
  /context_length_exceeded|maximum context length|context window|context length|prompt is too long|too many tokens|exceeds the context/i;

/** What classification needs to know beyond the error itself. */
export interface ErrorContext {
  /** The environment variable the API key came from, named in authentication errors. */
  readonly apiKeyEnv?: string | undefined;
  /** Milliseconds since the epoch, for retry-after given as an HTTP date. */
  readonly now?: (() => number) | undefined;
}

/** An HTTP error answer from a provider, classified by its status and, where it matters, body. */
export function classifyHttpError(error: APICallError, status: number, context: ErrorContext): ModelError {
  const page = isHtmlContentType(headerValue(error.responseHeaders ?? {}, 'content-type')) ? ', an HTML page' : '';
  const detail = `HTTP ${status}: ${error.message}${page}`;
  const retryAfterMs = parseRetryAfterMs(error.responseHeaders, context.now ?? Date.now);
  if ((status === 400 || status === 413) && CONTEXT_WINDOW_PATTERN.test(`${error.message}\n${error.responseBody ?? ''}`)) {
    return contextLengthError(detail, status);
  }
  if (status === 401 || status === 403) return authError(detail, status, context.apiKeyEnv);
  if (status === 429) {
    return modelError('rate-limit', `The provider is rate limiting requests (${detail}).`, status, true, retryAfterMs);
  }
  if (status === 408) {
    return modelError('timeout', `The provider timed out the request (${detail}).`, status, true, retryAfterMs);
  }
  if (status === 409 || status >= 500) {
    return modelError('server', `The provider failed to answer (${detail}).`, status, true, retryAfterMs);
  }
  return modelError(
    'bad-request',
    `The provider rejected the request (${detail}). Retrying the same request would fail the same way.`,
    status,
    false,
  );
}

/**
 * An error a provider reported inside an otherwise successful stream, as the plain object it
 * sent (`{ type: 'overloaded_error', message }`, `{ code: 'server_error', message }`, ...).
 */
export function classifyStreamErrorObject(error: object, context: ErrorContext): ModelError {
  const fields = error as { type?: unknown; code?: unknown; message?: unknown };
  const label = [fields.type, fields.code].filter((value) => typeof value === 'string').join(' ');
  const message = typeof fields.message === 'string' ? fields.message : JSON.stringify(error);
  const detail = label === '' ? message : `${label}: ${message}`;
  if (CONTEXT_WINDOW_PATTERN.test(`${label} ${message}`)) return contextLengthError(detail, null);
  if (/rate_limit/i.test(label)) {
    return modelError('rate-limit', `The provider is rate limiting requests (${detail}).`, null, true);
  }
  if (/authentication|permission|api_key/i.test(label)) return authError(detail, null, context.apiKeyEnv);
  if (/invalid_request/i.test(label)) {
    return modelError('bad-request', `The provider rejected the request (${detail}).`, null, false);
  }
  return modelError('server', `The provider failed in the middle of its answer (${detail}).`, null, true);
}

function contextLengthError(detail: string, status: number | null): ModelError {
  return modelError(
    'context-length',
    `The conversation no longer fits in the model's context window (${detail}). ` +
      'Shorten or compact the conversation before calling the model again.',
    status,
    false,
  );
}

function authError(detail: string, status: number | null, apiKeyEnv: string | undefined): ModelError {
  const advice =
    apiKeyEnv === undefined
      ? 'Put a valid key in an environment variable and name it with --api-key-env NAME.'
      : `Check that the environment variable ${apiKeyEnv} holds a valid key for this provider, ` +
        'or name another variable with --api-key-env NAME.';
  return modelError('auth', `The provider refused the API key (${detail}). ${advice}`, status, false);
}

/**
 * How long the provider asked us to wait, from `retry-after-ms` (milliseconds) or `retry-after`
 * (seconds, or an HTTP date). Null when it did not ask or the header cannot be read.
 */
export function parseRetryAfterMs(
  headers: Readonly<Record<string, string>> | undefined,
  now: () => number,
): number | null {
  if (headers === undefined) return null;
  const milliseconds = headerValue(headers, 'retry-after-ms');
  if (milliseconds !== undefined) {
    const value = Number(milliseconds);
    if (milliseconds.trim() !== '' && Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter === undefined || retryAfter.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? null : Math.max(0, date - now());
}

function headerValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}
