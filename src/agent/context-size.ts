import type { Usage } from '../model/chat-model.js';
import { conversationLength, type Message } from '../model/messages.js';

/**
 * How big a conversation is in tokens, and the cuts that make it smaller. Pure functions: the
 * loop applies them as it goes and the rebuild applies them again from the recorded events,
 * so both arrive at the same messages.
 */

/** Characters per token for text whose tokens were never counted: the usual figure for English and code. */
const CHARS_PER_TOKEN = 4;

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Estimates requests from the last one the provider counted: what it said the request took,
 * less what the characters alone account for, is the part characters do not show (tool
 * schemas, message framing), and stays about the same from call to call.
 */
export class TokenEstimator {
  #overhead = 0;

  /** Tells the estimator what a request of `messages` (plus `extraChars`) really took. */
  observe(messages: readonly Message[], extraChars: number, usage: Usage): void {
    const counted = usage.inputTokens;
    if (counted <= 0) return;
    this.#overhead = Math.max(0, counted - tokensOfChars(conversationLength(messages) + extraChars));
  }

  estimate(messages: readonly Message[], extraChars: number): number {
    return tokensOfChars(conversationLength(messages) + extraChars) + this.#overhead;
  }
}

/** How long a shrunk tool output's head and tail are, together. */
export const SHRUNK_OUTPUT_CHARS = 400;

/**
 * Cuts every tool output before the last `keptTurns` answers to its first and last
 * `maxChars / 2` characters, with a line saying how much went and where the rest is. Outputs
 * already that short (or shrunk before) stay as they are. Returns how many were cut.
 */
export function shrinkOldToolOutputs(messages: Message[], keptTurns: number, maxChars: number): number {
  const boundary = turnBoundary(messages, keptTurns);
  const half = Math.floor(maxChars / 2);
  let shrunk = 0;
  for (let index = 0; index < boundary; index += 1) {
    const message = messages[index];
    if (message?.role !== 'tool') continue;
    const omitted = message.content.length - 2 * half;
    // The marker line costs about 100 characters: cutting less than that saves nothing.
    if (omitted <= 100) continue;
    const content = `${message.content.slice(0, half)}\n[... ${omitted} characters omitted by colony to save context; the full output is in the run's log ...]\n${message.content.slice(-half)}`;
    messages[index] = { ...message, content };
    shrunk += 1;
  }
  return shrunk;
}

/**
 * Where the last `keptTurns` answers begin: the index of the first message that belongs to
 * them. A turn is the user messages an answer replied to, the answer, and its tool results, so
 * a cut there never parts a call from its result. `messages.length` when `keptTurns` is 0.
 */
export function turnBoundary(messages: readonly Message[], keptTurns: number): number {
  if (keptTurns <= 0) return messages.length;
  let seen = 0;
  let index = messages.length;
  for (let position = messages.length - 1; position >= 0; position -= 1) {
    if (messages[position]?.role !== 'assistant') continue;
    seen += 1;
    index = position;
    if (seen === keptTurns) break;
  }
  if (seen === 0) return messages.length;
  // The user messages right before the answer are what it answered: they stay with it.
  while (index > 0 && messages[index - 1]?.role === 'user') index -= 1;
  return index;
}

/**
 * Where the messages no answer has replied to yet begin (a handoff just taken, a person's
 * message, a reminder): the index after the last answer and its tool results.
 */
export function unansweredStart(messages: readonly Message[]): number {
  let index = messages.length;
  while (index > 0 && messages[index - 1]?.role === 'user') index -= 1;
  return index;
}

/** The opening every compacted conversation keeps: the system prompt and the task. */
export const OPENING_MESSAGES = 2;

/**
 * The conversation after a summary: the opening, the summary as a user message, and the
 * last `kept` messages as they were.
 */
export function compactedMessages(messages: readonly Message[], summary: string, kept: number): Message[] {
  const tail = kept === 0 ? [] : messages.slice(-kept);
  return [...messages.slice(0, OPENING_MESSAGES), { role: 'user', content: summary }, ...tail];
}
