import type { Message } from '../messages.js';
import { simPlannerTurn } from './planner-policy.js';
import type { SimAnswer } from './sim-answer.js';
import { seededRoll } from './seeded-roll.js';
import type { SimOptions } from './sim-options.js';
import { simWorkerTurn } from './worker-policy.js';

/**
 * The sim's answer to any conversation. Which role it plays is read from the tools it is
 * offered, as a real model would: with `create_task` it is a planner, otherwise a worker.
 */
export function simTurn(messages: readonly Message[], toolNames: readonly string[], options: SimOptions): SimAnswer {
  return toolNames.includes('create_task') ? simPlannerTurn(messages, toolNames, options) : simWorkerTurn(messages, toolNames, options);
}

/**
 * How long this turn of the conversation should take, in milliseconds, drawn from the seed,
 * the first user message (the task or the brief) and the number of answers so far. It reads
 * nothing role-specific, so workers and planners are slowed alike.
 */
/**
 * Whether this call of a worker hangs (see `SimOptions.stall`): never the first call, so a
 * stalled worker has started; decided by the task and the turn, so a retry of it hangs too.
 */
export function simStalls(options: SimOptions, messages: readonly Message[], toolNames: readonly string[]): boolean {
  if (options.stall === 0 || toolNames.includes('create_task')) return false;
  const firstUser = messages.find((message) => message.role === 'user');
  const taskText = firstUser?.role === 'user' ? firstUser.content : '';
  const turn = messages.filter((message) => message.role === 'assistant').length;
  return turn > 0 && seededRoll(options.seed, taskText, turn, 'stall') < options.stall;
}

export function simLatencyMs(options: SimOptions, messages: readonly Message[]): number {
  const { min, max } = options.latencyMs;
  if (max <= min) return min;
  const firstUser = messages.find((message) => message.role === 'user');
  const taskText = firstUser?.role === 'user' ? firstUser.content : '';
  const turn = messages.filter((message) => message.role === 'assistant').length;
  return min + Math.floor(seededRoll(options.seed, taskText, turn, 'latency') * (max - min + 1));
}
