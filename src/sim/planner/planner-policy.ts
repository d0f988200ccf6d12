import type { Message } from '../../model/messages.js';
import type { SimAnswer } from '../sim-answer.js';
import { simAnswer } from '../sim-answer.js';
import type { SimOptions } from '../sim-options.js';
import { readPlannerConversation } from './planner-conversation.js';
import { planPlannerTurn } from './planner-next-step.js';
import { encodePlannerCall } from './planner-tool-calls.js';

/**
 * The sim planner's answer to a conversation, following the planner protocol
 * (docs/architecture/planner.md). It reads nothing but `messages`, the tool names and the
 * options, keeps no state, and rolls no faults (only which Build tasks it tells to skip the
 * tests, `skiptests`): the same conversation and options always give the same answer. An
 * answer without tool calls, while tasks are open, is how it waits for their handoffs.
 */
export function simPlannerTurn(messages: readonly Message[], toolNames: readonly string[], options: SimOptions): SimAnswer {
  const conversation = readPlannerConversation(messages);
  const planned = planPlannerTurn(conversation, toolNames, options);
  return simAnswer(messages, conversation.turn, planned.text, planned.calls.map(encodePlannerCall), options);
}
