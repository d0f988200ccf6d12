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
