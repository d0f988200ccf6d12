import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { parseOpenAIChatRequest } from './openai-chat-request.js';
import { answerParts, streamPieces } from './wire-format.js';
import type { StreamFrame, WireFormat } from './wire-format.js';

/** OpenAI's chat-completions API: `POST /v1/chat/completions`, JSON or server-sent chunks. */
export const openAIChatFormat: WireFormat = {
  idPrefix: 'chatcmpl-',
  parseRequest: parseOpenAIChatRequest,

  errorBody(status, message, code) {
    return { error: { message, type: errorType(status), param: null, code: code ?? errorCode(status) } };
  },

  responseBody(result, call, identity) {
    const { text, toolCalls } = answerParts(result);
    return {
      id: identity.id,
      object: 'chat.completion',
      created: identity.createdSeconds,
      model: call.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text === '' && toolCalls.length > 0 ? null : text,
            ...(toolCalls.length === 0
              ? {}
              : {
                  tool_calls: toolCalls.map((toolCall) => ({
                    id: toolCall.id,
                    type: 'function',
                    function: { name: toolCall.name, arguments: toolCall.input },
                  })),
                }),
          },
          logprobs: null,
          finish_reason: finishReason(result, toolCalls.length > 0),
        },
      ],
      usage: usageOf(result),
    };
  },

  streamFrames(result, call, identity) {
    const { text, toolCalls } = answerParts(result);
    const frames: StreamFrame[] = [];
    const chunk = (choices: unknown[], carriesOutput: boolean, extra: Record<string, unknown> = {}): void => {
      const body = {
        id: identity.id,
        object: 'chat.completion.chunk',
        created: identity.createdSeconds,
        model: call.model,
        choices,
        ...extra,
      };
      frames.push({ text: `data: ${JSON.stringify(body)}\n\n`, carriesOutput });
    };
    const delta = (content: Record<string, unknown>): unknown[] => [
      { index: 0, delta: content, logprobs: null, finish_reason: null },
    ];
    chunk(delta({ role: 'assistant', content: '' }), false);
    for (const piece of streamPieces(text)) chunk(delta({ content: piece }), true);
    toolCalls.forEach((toolCall, index) => {
      chunk(
        delta({
          tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } }],
        }),
        true,
      );
      for (const piece of streamPieces(toolCall.input)) {
        chunk(delta({ tool_calls: [{ index, function: { arguments: piece } }] }), true);
      }
    });
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason(result, toolCalls.length > 0) }], false);
    if (call.includeUsage) chunk([], false, { usage: usageOf(result) });
    frames.push({ text: 'data: [DONE]\n\n', carriesOutput: false });
    return frames;
  },

  garbage(stream) {
    return stream ? 'data: {"id": "chatcmpl-garbage", "choices": [{"delta": {"content": \n\n' : '{"id": "chatcmpl-garbage", "choices": [';
  },
};

/** Why the answer ended; an answer cut off at its output limit says so even when it holds tool calls, as OpenAI's does. */
function finishReason(result: LanguageModelV3GenerateResult, hasToolCalls: boolean): string {
  if (result.finishReason.unified === 'length') return 'length';
  if (hasToolCalls) return 'tool_calls';
  switch (result.finishReason.unified) {
    case 'content-filter':
      return 'content_filter';
    case 'tool-calls':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

function usageOf(result: LanguageModelV3GenerateResult): Record<string, unknown> {
  const input = result.usage.inputTokens;
  const promptTokens = input.total ?? input.noCache ?? 0;
  const completionTokens = result.usage.outputTokens.total ?? 0;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: input.cacheRead ?? 0 },
  };
}

function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function errorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}
