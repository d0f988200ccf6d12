import type { Message } from '../../model/messages.js';

/**
 * How colony tells an agent its budget is used up and this is its last model call (the
 * notice's first words, docs/architecture/orchestrator.md, "Budgets"). The sim reads it as
 * text, as a real model would, and hands off at once.
 */
export const BUDGET_USED_UP_HEADER = 'Budget used up:';

/** Whether a message is the notice that the budget is used up (colony may tell it along with other notices, one per line). */
export function carriesBudgetNotice(message: Message): boolean {
  return message.role === 'user' && message.content.split('\n').some((line) => line.startsWith(BUDGET_USED_UP_HEADER));
}
