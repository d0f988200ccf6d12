import { APICallError } from '@ai-sdk/provider';
import type { Message } from '../model/messages.js';
import { conversationLength } from '../model/messages.js';
import type { SimOptions } from './sim-options.js';

/** The code OpenAI gives a request that does not fit; the model server passes it on. */
export const CONTEXT_LENGTH_EXCEEDED = 'context_length_exceeded';

/** The input tokens of a request, counted as the sim reports them: a quarter of its characters. */
export function inputTokensOf(messages: readonly Message[]): number {
  return Math.ceil(conversationLength(messages) / 4);
}

/** What is over the sim's context window in this request; null when it fits (or there is no window). */
export function contextOverflow(options: SimOptions, messages: readonly Message[]): { readonly limit: number; readonly tokens: number } | null {
  if (options.context === null) return null;
  const tokens = inputTokensOf(messages);
  return tokens > options.context ? { limit: options.context, tokens } : null;
}

/**
 * The error a provider gives a request larger than its context window: HTTP 400, an invalid
 * request, not worth retrying, worded as OpenAI words it so colony classifies it as a
 * context-length error (http-error-classification.ts).
 */
export function contextLengthError(limit: number, tokens: number): APICallError {
  const message = `This model's maximum context length is ${limit} tokens, but the request has ${tokens} tokens (${CONTEXT_LENGTH_EXCEEDED}).`;
  return new APICallError({
    message,
    url: 'sim:',
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({ error: { message, type: 'invalid_request_error', param: 'messages', code: CONTEXT_LENGTH_EXCEEDED } }),
    isRetryable: false,
    data: { code: CONTEXT_LENGTH_EXCEEDED },
  });
}
