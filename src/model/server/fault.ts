import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { writeError } from './http-responses.js';
import type { ModelCall, ResponseIdentity, WireFormat } from './wire-format.js';

/**
 * A failure the model server plays instead of answering, for tests of a client's error
 * handling. The server takes one from the front of its queue per generation request.
 */
export type Fault =
  /**
   * Answer this HTTP status in the provider's error format, or with `body` verbatim when given,
   * as `contentType` (JSON when absent): a web page from a proxy, say.
   */
  | { readonly status: number; readonly retryAfterSeconds?: number; readonly body?: string; readonly contentType?: string }
  /** Send the start of a 200 answer, then nothing, until the client hangs up. */
  | { readonly stallAfterFirstChunk: true }
  /** Send a 200 whose body cannot be parsed. */
  | { readonly garbage: true }
  /** Drop the connection without an answer. */
  | { readonly resetConnection: true };

/** Faults that need no understanding of the request; true when one was played. */
export function playTransportFault(
  fault: Fault,
  format: WireFormat,
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if ('resetConnection' in fault) {
    request.socket.resetAndDestroy();
    return true;
  }
  if ('status' in fault) {
    const headers: Record<string, string> =
      fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
    if (fault.body !== undefined) {
      response.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/json', ...headers });
      response.end(fault.body);
    } else {
      writeError(response, format, fault.status, defaultMessage(fault), headers);
    }
    return true;
  }
  return false;
}

/** Faults that imitate the start of an answer, shaped like one for `call`. */
export function playAnswerFault(
  fault: Fault,
  format: WireFormat,
  call: ModelCall,
  identity: ResponseIdentity,
  response: ServerResponse,
): void {
  if ('garbage' in fault) {
    response.writeHead(200, { 'content-type': call.stream ? 'text/event-stream' : 'application/json' });
    response.end(format.garbage(call.stream));
    return;
  }
  if (!('stallAfterFirstChunk' in fault)) return;
  // The stalled answer is made up, so a scripted model behind the server keeps its turns.
  const placeholder: LanguageModelV3GenerateResult = {
    content: [{ type: 'text', text: 'Working on it' }],
    finishReason: { unified: 'stop', raw: undefined },
    usage: {
      inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 0, text: 0, reasoning: 0 },
    },
    warnings: [],
  };
  if (call.stream) {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const frame of format.streamFrames(placeholder, call, identity)) {
      response.write(frame.text);
      if (frame.carriesOutput) break;
    }
  } else {
    const body = JSON.stringify(format.responseBody(placeholder, call, identity));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(body.slice(0, Math.floor(body.length / 2)));
  }
}

function defaultMessage(fault: { readonly status: number; readonly retryAfterSeconds?: number }): string {
  const retry = fault.retryAfterSeconds === undefined ? '' : ` Please retry after ${fault.retryAfterSeconds} seconds.`;
  if (fault.status === 429) return `Rate limit reached for requests.${retry}`;
  if (fault.status === 401) return 'Incorrect API key provided.';
  if (fault.status === 403) return 'This API key does not have permission to use this model.';
  if (fault.status >= 500) return `The server had an error while processing your request.${retry}`;
  return `The request was rejected with status ${fault.status}.`;
}
