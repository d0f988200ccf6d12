import type { Message } from '../model/messages.js';

/** Scheduled reminders, by step. A null interval turns that reminder off. */
export interface ReminderPolicy {
  /** Every this many steps the agent is asked to check its work against its goal. */
  readonly reflectEvery: number | null;
  readonly reflectText: string;
  /** An agent that has not rewritten its scratchpad for this many steps is asked to. */
  readonly scratchpadEvery: number | null;
  readonly scratchpadText: string;
}

export type Reminder = { readonly kind: 'reflect' | 'scratchpad'; readonly text: string };

/**
 * When to remind an agent. The counts start from where a restored agent left off: its last
 * scratchpad write, as its conversation records it.
 */
export class ReminderSchedule {
  readonly #policy: ReminderPolicy;
  #lastWrite: number;
  #lastScratchpadReminder: number;

  constructor(policy: ReminderPolicy, lastWriteStep: number) {
    this.#policy = policy;
    this.#lastWrite = lastWriteStep;
    this.#lastScratchpadReminder = lastWriteStep;
  }

  /** The reminders due before model call `step` (1 for the first), in the order to tell them. */
  due(step: number): Reminder[] {
    const { reflectEvery, scratchpadEvery } = this.#policy;
    const due: Reminder[] = [];
    if (reflectEvery !== null && step > 1 && (step - 1) % reflectEvery === 0) due.push({ kind: 'reflect', text: this.#policy.reflectText });
    if (scratchpadEvery !== null && step - this.#lastWrite > scratchpadEvery && step - this.#lastScratchpadReminder > scratchpadEvery) {
      this.#lastScratchpadReminder = step;
      due.push({ kind: 'scratchpad', text: this.#policy.scratchpadText });
    }
    return due;
  }

  /** Tells the schedule what a turn added: a successful `write_scratchpad` restarts its count. */
  observeTurn(step: number, added: readonly Message[]): void {
    if (added.some((message) => message.role === 'tool' && message.toolName === 'write_scratchpad' && !message.isError)) this.#lastWrite = step;
  }
}
