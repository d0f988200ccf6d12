import type { Message } from '../../model/messages.js';

/**
 * The reminders colony sends an agent as user messages, by their first words, and the tool
 * error it answers a done handoff without evidence with. The sim reads them as text, as a
 * real model would (docs/architecture/sim.md, "Reminders").
 */

/** Reminders still to act on: a scratchpad one until the agent writes its scratchpad, a reflection one until it answers. */
export interface PendingReminders {
  readonly scratchpad: boolean;
  readonly reflection: boolean;
}

/** Whether a user message carries the reminder (colony may send it along with other notices, one per line). */
export function carriesReminder(message: Message, opening: string): boolean {
  return message.role === 'user' && message.content.split('\n').some((line) => line.startsWith(opening));
}
