import type { Message } from '../../model/messages.js';
import { COMPACTION_REQUEST_OPENING, SUMMARY_OPENING } from '../../protocol/message-openings.js';
import type { SimOptions } from '../sim-options.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { simTurn } from '../sim-turn.js';

/**
 * Compaction as colony does it, for the sim's tests: a request with the older turns and the
 * prompt, no tools offered; then the conversation rebuilt from the summary and the recent turns.
 */

export const COMPACTION_PROMPT =
  `${COMPACTION_REQUEST_OPENING} the conversation above for yourself: the goal, what is done, what is in flight, ` +
  'the open threads and the next step. The most recent turns are kept as they are.';

export interface Compaction {
  /** What the sim was asked. */
  readonly request: readonly Message[];
  /** Its answer's text: the summary. */
  readonly summary: string;
  readonly toolCalls: number;
  /** The conversation colony goes on with. */
  readonly compacted: Message[];
}

/** Replaces everything after the first user message but the last `keep` messages with the sim's summary of it. */
export function compact(messages: readonly Message[], keep: number, options: SimOptions = DEFAULT_SIM_OPTIONS): Compaction {
  const [system, firstUser] = messages;
  if (system?.role !== 'system' || firstUser?.role !== 'user') throw new Error('a conversation starts with the system prompt and the task');
  if (keep < 0 || keep > messages.length - 2) throw new Error(`cannot keep ${keep} of ${messages.length - 2} messages`);
  const request: Message[] = [system, firstUser, ...messages.slice(2, messages.length - keep), { role: 'user', content: COMPACTION_PROMPT }];
  const answer = simTurn(request, [], options);
  const summary: Message = { role: 'user', content: `${SUMMARY_OPENING} (it replaces the earlier turns):\n\n${answer.text}` };
  return {
    request,
    summary: answer.text,
    toolCalls: answer.toolCalls.length,
    compacted: [system, firstUser, summary, ...messages.slice(messages.length - keep)],
  };
}

/** The `sim-state` JSON of a summary. */
export function stateOf(summary: string): Record<string, unknown> {
  const json = /```sim-state\n([^\n]*)\n```/.exec(summary)?.[1];
  if (json === undefined) throw new Error(`no sim-state block in: ${summary}`);
  return JSON.parse(json) as Record<string, unknown>;
}

/** A few ways to split a conversation of `length` messages: none kept, a few, about half, all. */
export function keepCounts(length: number): number[] {
  const most = length - 2;
  const candidates = [0, 1, 2, 3, 5, 8, Math.floor(most / 2), most - 1, most];
  return [...new Set(candidates.filter((keep) => keep >= 0 && keep <= most))];
}
