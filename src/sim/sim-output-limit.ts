import type { ToolCall } from '../model/messages.js';
import type { SimAnswer } from './sim-answer.js';

/** Characters per output token, as the sim counts its answers (`simAnswer`). */
const CHARACTERS_PER_TOKEN = 4;

/**
 * The sim's answer as a provider gives it when the request allows at most `maxOutputTokens`:
 * unchanged when it fits; otherwise written in order (the extra tokens of `SimOptions.tokens`
 * first, as a model's reasoning, then the text, then each call's name and arguments) until
 * the output runs out, and stopped there. A call whose name was written keeps the arguments
 * written so far, however few, as a provider sends them; the calls after it never began.
 * `cut` says whether it was stopped; its output then counts as the whole limit.
 */
export function cutAtOutputLimit(answer: SimAnswer, maxOutputTokens: number | undefined, extraTokens: number): { readonly answer: SimAnswer; readonly cut: boolean } {
  if (maxOutputTokens === undefined || answer.usage.outputTokens <= maxOutputTokens) return { answer, cut: false };
  let left = Math.max(0, maxOutputTokens - extraTokens) * CHARACTERS_PER_TOKEN;
  const text = answer.text.slice(0, left);
  left -= text.length;
  const toolCalls: ToolCall[] = [];
  for (const call of answer.toolCalls) {
    if (left <= call.name.length) break;
    const input = call.input.slice(0, left - call.name.length);
    toolCalls.push({ ...call, input });
    left -= call.name.length + input.length;
    if (input.length < call.input.length) break;
  }
  return { answer: { text, toolCalls, usage: { ...answer.usage, outputTokens: maxOutputTokens } }, cut: true };
}
