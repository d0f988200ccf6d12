import type { Message } from '../messages.js';
import { isSummaryMessage } from './compaction-protocol.js';

/**
 * How colony tells an agent its budget is used up and this is its last model call (the
 * notice's first words, docs/architecture/orchestrator.md, "Budgets"). The sim reads it as
 * text, as a real model would, and hands off at once.
 */
export const BUDGET_USED_UP_HEADER = 'Budget used up:';

/**
 * Whether the conversation holds the notice that the budget is used up (colony may tell it
 * along with other notices). A summary is not a notice: what it replaced is in its state.
 */
export function budgetUsedUp(messages: readonly Message[]): boolean {
  return messages.some(
    (message, index) =>
      index > 1 &&
      message.role === 'user' &&
      !isSummaryMessage(message) &&
      message.content.split('\n').some((line) => line.startsWith(BUDGET_USED_UP_HEADER)),
  );
}
