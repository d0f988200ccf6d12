import type { Message } from '../model/messages.js';
import type { ConversationParts } from './conversation-parts.js';
import { splitConversation, splitUnfinishedTurn, summaryText } from './conversation-parts.js';
import { readHandoffMessage } from './reading/handoff-message.js';
import { plannerSummary } from './planner/planner-summary.js';
import type { SimAnswer } from './sim-answer.js';
import { simAnswer } from './sim-answer.js';
import type { SimOptions } from './sim-options.js';
import { workerSummary } from './worker/worker-summary.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const PLANNER_PROMPT = /\bYou are (?:a|the root|a sub-) ?planner\b/i;
const PLANNER_ONLY_TOOLS: ReadonlySet<string> = new Set([TOOL_NAMES.createTask, TOOL_NAMES.delegate, TOOL_NAMES.finish]);

/**
 * The sim's answer to a compaction request (compaction-protocol.ts): text only, a summary of
 * everything before the prompt, ending in the `sim-state` block it goes on from. Which role it
 * summarises is read from the conversation, since no tools are offered: the state of an
 * earlier summary, the system prompt, a sub-planner's scope line, its own planner calls or the
 * handoffs it received.
 */
export function simCompactionTurn(messages: readonly Message[], options: SimOptions): SimAnswer {
  const parts = splitConversation(messages.slice(0, -1));
  const { folded, unfinished } = splitUnfinishedTurn(parts.rest);
  const summarised = { ...parts, rest: folded };
  const summary = roleOf(parts) === 'planner' ? plannerSummary(summarised, options) : workerSummary(summarised, options, unfinished !== null);
  const state = unfinished === null ? { ...summary.state } : { ...summary.state, unfinished };
  return simAnswer(messages, summary.state.turn, summaryText(summary.lines, state), [], options);
}

export function roleOf(parts: ConversationParts): 'planner' | 'worker' {
  const carried = parts.carried?.role;
  if (carried === 'planner' || carried === 'worker') return carried;
  if (PLANNER_PROMPT.test(parts.system) || parts.firstUser.startsWith('Your scope: `')) return 'planner';
  const plannerHistory = parts.rest.some(
    (message) =>
      (message.role === 'assistant' && message.toolCalls.some((call) => PLANNER_ONLY_TOOLS.has(call.name))) ||
      (message.role === 'user' && readHandoffMessage(message.content) !== null),
  );
  return plannerHistory ? 'planner' : 'worker';
}
