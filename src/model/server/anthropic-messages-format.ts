import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { parseAnthropicMessagesRequest } from './anthropic-messages-request.js';
import { answerParts, streamPieces } from './wire-format.js';
import type { StreamFrame, WireFormat } from './wire-format.js';

/** Anthropic's messages API: `POST /v1/messages`, JSON or named server-sent events. */
export const anthropicMessagesFormat: WireFormat = {
  idPrefix: 'msg_',
  parseRequest: parseAnthropicMessagesRequest,

  errorBody(status, message) {
    return { type: 'error', error: { type: errorType(status), message } };
  },

  responseBody(result, call, identity) {
    const { text, toolCalls } = answerParts(result);
    return {
      id: identity.id,
      type: 'message',
      role: 'assistant',
      model: call.model,
      content: [
        ...(text === '' ? [] : [{ type: 'text', text }]),
        ...toolCalls.map((toolCall) => ({
          type: 'tool_use',
          id: toolCall.id,
          name: toolCall.name,
          input: inputValue(toolCall.input),
        })),
      ],
      stop_reason: stopReason(result, toolCalls.length > 0),
      stop_sequence: null,
      usage: { ...inputUsage(result), output_tokens: result.usage.outputTokens.total ?? 0 },
    };
  },

  streamFrames(result, call, identity) {
    const { text, toolCalls } = answerParts(result);
    const frames: StreamFrame[] = [];
    const event = (body: { type: string } & Record<string, unknown>, carriesOutput = false): void => {
      frames.push({ text: `event: ${body.type}\ndata: ${JSON.stringify(body)}\n\n`, carriesOutput });
    };
    event({
      type: 'message_start',
      message: {
        id: identity.id,
        type: 'message',
        role: 'assistant',
        model: call.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputUsage(result), output_tokens: 0 },
      },
    });
    event({ type: 'ping' });
    let index = 0;
    if (text !== '') {
      event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of streamPieces(text)) {
        event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }, true);
      }
      event({ type: 'content_block_stop', index });
      index += 1;
    }
    for (const toolCall of toolCalls) {
      event(
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolCall.id, name: toolCall.name, input: {} } },
        true,
      );
      for (const piece of streamPieces(toolCall.input)) {
        event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }, true);
      }
      event({ type: 'content_block_stop', index });
      index += 1;
    }
    event({
      type: 'message_delta',
      delta: { stop_reason: stopReason(result, toolCalls.length > 0), stop_sequence: null },
      usage: { output_tokens: result.usage.outputTokens.total ?? 0 },
    });
    event({ type: 'message_stop' });
    return frames;
  },

  garbage(stream) {
    return stream
      ? 'event: message_start\ndata: {"type": "message_start", "message": {"id": \n\n'
      : '{"type": "message", "content": [';
  },
};

/** Anthropic counts cached input apart from `input_tokens`. */
function inputUsage(result: LanguageModelV3GenerateResult): Record<string, number> {
  const input = result.usage.inputTokens;
  const cacheRead = input.cacheRead ?? 0;
  const cacheWrite = input.cacheWrite ?? 0;
  const uncached = input.total === undefined ? (input.noCache ?? 0) : Math.max(0, input.total - cacheRead - cacheWrite);
  return { input_tokens: uncached, cache_creation_input_tokens: cacheWrite, cache_read_input_tokens: cacheRead };
}

/**
 * A tool_use block's input is a JSON object. Arguments that are not one (a model's malformed
 * call) go out as the raw string, so a client still sees what the model produced.
 */
function inputValue(input: string): unknown {
  try {
    const value: unknown = JSON.parse(input);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  } catch {
    // Not JSON: fall through to the raw string.
  }
  return input;
}

/** Why the answer stopped; an answer cut off at its output limit says so even in a tool_use block, as Anthropic's does. */
function stopReason(result: LanguageModelV3GenerateResult, hasToolCalls: boolean): string {
  if (result.finishReason.unified === 'length') return 'max_tokens';
  if (hasToolCalls) return 'tool_use';
  switch (result.finishReason.unified) {
    case 'content-filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}
