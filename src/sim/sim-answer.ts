import type { Usage } from '../model/chat-model.js';
import type { Message, ToolCall } from '../model/messages.js';
import { inputTokensOf } from './sim-context-window.js';
import type { SimOptions } from './sim-options.js';

/** One answer of the sim, worker or planner, shaped like a model's. */
export interface SimAnswer {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
}

/**
 * Wraps what the sim means to say and call into an answer: tool call ids `call_<turn>_<n>`,
 * unique in a conversation, and usage of about a quarter of the characters in and out, plus
 * the extra tokens the options ask for.
 */
export function simAnswer(
  messages: readonly Message[],
  turn: number,
  text: string,
  calls: readonly { readonly name: string; readonly input: string }[],
  options: SimOptions,
): SimAnswer {
  const toolCalls = calls.map((call, position) => ({ id: `call_${turn}_${position}`, name: call.name, input: call.input }));
  const answerLength = text.length + toolCalls.reduce((sum, call) => sum + call.name.length + call.input.length, 0);
  return {
    text,
    toolCalls,
    usage: {
      inputTokens: inputTokensOf(messages),
      outputTokens: Math.ceil(answerLength / 4) + options.tokens,
      cachedInputTokens: 0,
    },
  };
}
