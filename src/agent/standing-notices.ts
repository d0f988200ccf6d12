import type { Message } from '../model/messages.js';
import type { AgentRecorder } from './types.js';

/**
 * A notice colony keeps standing before an agent (what is in flight, a view of main that fell
 * behind, checks already failing on main): one of each kind, the latest only.
 */
export interface StandingNotice {
  readonly kind: string;
  readonly text: string;
}

/**
 * The standing notices of one agent. They are shown after the conversation in every request,
 * like the scratchpad, and never kept in it: a notice that changes replaces the one before
 * instead of piling up, and the conversation, the prefix a provider caches, stays as it was.
 * Each change is recorded (`agent.nudged` with its `notice` kind; an empty message withdraws
 * one), so a restart shows the same notices and a replay sees when each was told.
 */
export class StandingNotices {
  private readonly shown: Map<string, string>;

  constructor(restored: ReadonlyMap<string, string> = new Map()) {
    this.shown = new Map(restored);
  }

  /**
   * Takes the notices as they stand before the model call of `step` (a kind left out is
   * withdrawn), records what changed, and returns the message that shows them; null when none
   * stands.
   */
  update(current: readonly StandingNotice[], step: number, recorder: AgentRecorder): Message | null {
    const now = new Map(current.filter((notice) => notice.text !== '').map((notice) => [notice.kind, notice.text]));
    for (const kind of this.shown.keys()) {
      if (!now.has(kind)) recorder.record({ type: 'agent.nudged', data: { step, message: '', notice: kind } });
    }
    for (const [kind, text] of now) {
      if (this.shown.get(kind) !== text) recorder.record({ type: 'agent.nudged', data: { step, message: text, notice: kind } });
    }
    this.shown.clear();
    for (const [kind, text] of now) this.shown.set(kind, text);
    return now.size === 0 ? null : { role: 'user', content: [...now.values()].join('\n\n') };
  }
}
