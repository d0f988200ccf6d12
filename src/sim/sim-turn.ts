import type { Message } from '../model/messages.js';
import { isCompactionRequest } from './reading/compaction-protocol.js';
import { splitConversation } from './conversation-parts.js';
import { simPlannerTurn } from './planner/planner-policy.js';
import type { SimAnswer } from './sim-answer.js';
import { simCompactionTurn } from './sim-compaction.js';
import { seededRoll } from './seeded-roll.js';
import type { SimOptions } from './sim-options.js';
import { simWorkerTurn } from './worker/worker-policy.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

/**
 * The sim's answer to any conversation. A compaction request is answered with a summary,
 * whatever the role; otherwise which role it plays is read from the tools it is offered, as a
 * real model would: with `create_task` it is a planner, otherwise a worker.
 */
export function simTurn(messages: readonly Message[], toolNames: readonly string[], options: SimOptions): SimAnswer {
  if (isCompactionRequest(messages)) return simCompactionTurn(messages, options);
  return toolNames.includes(TOOL_NAMES.createTask) ? simPlannerTurn(messages, toolNames, options) : simWorkerTurn(messages, toolNames, options);
}

/**
 * How many answers the conversation holds, counting those its latest summary replaced, so
 * rolls keyed by the turn go on as if nothing had been compacted.
 */
export function conversationTurn(messages: readonly Message[]): number {
  const parts = splitConversation(messages);
  const carried = parts.carried?.turn;
  const before = typeof carried === 'number' && Number.isInteger(carried) && carried >= 0 ? carried : 0;
  return before + parts.rest.filter((message) => message.role === 'assistant').length;
}

/**
 * Whether this call of a worker hangs (see `SimOptions.stall`): never the first call, so a
 * stalled worker has started; decided by the task and the turn, so a retry of it hangs too.
 * A compaction request never hangs: the knob is about a worker's own turns.
 */
export function simStalls(options: SimOptions, messages: readonly Message[], toolNames: readonly string[]): boolean {
  if (options.stall === 0 || toolNames.includes(TOOL_NAMES.createTask) || isCompactionRequest(messages)) return false;
  const turn = conversationTurn(messages);
  return turn > 0 && seededRoll(options.seed, firstUserText(messages), turn, 'stall') < options.stall;
}

/**
 * How long this turn of the conversation should take, in milliseconds, drawn from the seed,
 * the first user message (the task or the brief) and the number of answers so far. It reads
 * nothing role-specific, so workers and planners are slowed alike.
 */
export function simLatencyMs(options: SimOptions, messages: readonly Message[]): number {
  const { min, max } = options.latencyMs;
  if (max <= min) return min;
  return min + Math.floor(seededRoll(options.seed, firstUserText(messages), conversationTurn(messages), 'latency') * (max - min + 1));
}

function firstUserText(messages: readonly Message[]): string {
  const firstUser = messages.find((message) => message.role === 'user');
  return firstUser?.role === 'user' ? firstUser.content : '';
}
