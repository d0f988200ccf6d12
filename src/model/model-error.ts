import type { ModelError } from './chat-model.js';

export function modelError(
  kind: ModelError['kind'],
  message: string,
  status: number | null,
  retryable: boolean,
  retryAfterMs: number | null = null,
): ModelError {
  return { kind, message, status, retryable, retryAfterMs };
}

/** The caller cancelled: never retried. */
export function abortedError(): ModelError {
  return modelError('aborted', 'The model call was cancelled.', null, false);
}

/** Kinds that say the provider is unreachable, failing or overloaded for now, not that the request is wrong. */
const PROVIDER_UNAVAILABLE_KINDS: ReadonlySet<ModelError['kind']> = new Set([
  'rate-limit',
  'server',
  'timeout',
  'stall',
  'network',
  'circuit-open',
]);

/**
 * Whether the same request is likely to succeed later without any change: the provider was
 * rate limiting, overloaded, failing or unreachable, or its circuit is open. An unreadable
 * answer is not counted: it was already retried, and waiting does not make a model make sense.
 */
export function isProviderUnavailable(error: ModelError): boolean {
  return PROVIDER_UNAVAILABLE_KINDS.has(error.kind);
}
