import type { Message } from '../../model/messages.js';
import { BUDGET_USED_UP_HEADER } from '../../protocol/message-openings.js';

/** Whether a message is the notice that the budget is used up (colony may tell it along with other notices, one per line). */
export function carriesBudgetNotice(message: Message): boolean {
  return message.role === 'user' && message.content.split('\n').some((line) => line.startsWith(BUDGET_USED_UP_HEADER));
}
