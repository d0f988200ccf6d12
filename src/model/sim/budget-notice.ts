import type { Message } from '../messages.js';

/**
 * How colony tells an agent its budget is used up and this is its last model call (the
 * notice's first words, docs/architecture/orchestrator.md, "Budgets"). The sim reads it as
 * text, as a real model would, and hands off at once.
 */
export const BUDGET_USED_UP_HEADER = 'Budget used up:';

/** Whether the conversation holds the notice that the budget is used up. */
export function budgetUsedUp(messages: readonly Message[]): boolean {
  return messages.some((message, index) => index > 1 && message.role === 'user' && message.content.startsWith(BUDGET_USED_UP_HEADER));
}
