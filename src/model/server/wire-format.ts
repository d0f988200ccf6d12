import type { LanguageModelV3FunctionTool, LanguageModelV3GenerateResult, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { CacheablePrompt } from './prompt-cache.js';

/** A request, read from a provider's wire format into what a LanguageModelV3 takes. */
export interface ModelCall {
  readonly model: string;
  readonly prompt: LanguageModelV3Prompt;
  readonly tools: readonly LanguageModelV3FunctionTool[];
  /** What the request allows of the tools: `none` describes them but wants text; null when it does not say. */
  readonly toolChoice: 'auto' | 'none' | 'required' | null;
  readonly maxOutputTokens: number | undefined;
  readonly stream: boolean;
  /** OpenAI's `stream_options.include_usage`: a last chunk carrying usage. */
  readonly includeUsage: boolean;
  /** The request's prompt as the provider's prompt cache would see it, to bill its input. */
  readonly cacheable: CacheablePrompt;
}

export type ParsedRequest = { readonly ok: true; readonly call: ModelCall } | { readonly ok: false; readonly error: string };

/** One server-sent event, already formatted. */
export interface StreamFrame {
  readonly text: string;
  /** Whether it carries part of the answer (text or a tool call) rather than bookkeeping. */
  readonly carriesOutput: boolean;
}

export interface ResponseIdentity {
  readonly id: string;
  readonly createdSeconds: number;
}

/** One provider's HTTP API, both directions, as the model server speaks it. */
export interface WireFormat {
  /** Prefix of the ids the provider gives its answers (`chatcmpl-`, `msg_`). */
  readonly idPrefix: string;
  parseRequest(body: unknown): ParsedRequest;
  /** The JSON body of an HTTP error, in the provider's error shape; `code` is the provider's error code, where it has one. */
  errorBody(status: number, message: string, code?: string): unknown;
  /** The JSON body of a whole (non-streamed) answer. */
  responseBody(result: LanguageModelV3GenerateResult, call: ModelCall, identity: ResponseIdentity): unknown;
  /** The server-sent events of a streamed answer, in order. */
  streamFrames(result: LanguageModelV3GenerateResult, call: ModelCall, identity: ResponseIdentity): StreamFrame[];
  /** A 200 body that looks like the start of an answer but cannot be parsed. */
  garbage(stream: boolean): string;
}

/** The answer's text and tool calls, in the order the model gave them. */
export function answerParts(result: LanguageModelV3GenerateResult): {
  text: string;
  toolCalls: { id: string; name: string; input: string }[];
} {
  let text = '';
  const toolCalls: { id: string; name: string; input: string }[] = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    if (part.type === 'tool-call' && part.providerExecuted !== true) {
      toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
    }
  }
  return { text, toolCalls };
}

/** Text cut into small pieces, as a streaming API sends it; never splits a character. */
export function streamPieces(text: string, size = 12): string[] {
  const characters = Array.from(text);
  const result: string[] = [];
  for (let start = 0; start < characters.length; start += size) {
    result.push(characters.slice(start, start + size).join(''));
  }
  return result;
}
