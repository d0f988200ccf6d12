import type { Message } from '../../model/messages.js';

/**
 * The reminders colony sends an agent as user messages, by their first words, and the tool
 * error it answers a done handoff without evidence with. The sim reads them as text, as a
 * real model would (docs/architecture/sim.md, "Reminders").
 */

/** The agent has not rewritten its scratchpad for a while: it should, with where it stands. */
export const SCRATCHPAD_REMINDER_OPENING = 'Scratchpad reminder:';

/** The agent should check its work against its goal; pivoting is allowed. */
export const REFLECTION_REMINDER_OPENING = 'Reflection reminder:';

/** The start of the error a `submit_handoff` with status done but no evidence gets back. */
export const EVIDENCE_FIRST_OPENING = 'Evidence first:';

/** Reminders still to act on: a scratchpad one until the agent writes its scratchpad, a reflection one until it answers. */
export interface PendingReminders {
  readonly scratchpad: boolean;
  readonly reflection: boolean;
}

/** Whether a user message carries the reminder (colony may send it along with other notices, one per line). */
export function carriesReminder(message: Message, opening: string): boolean {
  return message.role === 'user' && message.content.split('\n').some((line) => line.startsWith(opening));
}
