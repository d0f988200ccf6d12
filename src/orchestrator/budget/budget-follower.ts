import type { RecordedEvent } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { BudgetLedger } from './budget-ledger.js';

/** The events a budget ledger folds. */
export const BUDGET_EVENT_TYPES = ['task.created', 'agent.started', 'agent.restored', 'agent.ended', 'model.responded', 'context.compacted'] as const;

/** How often a process of a run on several machines reads what the others spent. */
const FOLLOW_EVERY_MS = 1_000;

export interface BudgetFollower {
  /** Told of every event this process records, which its ledger folds as it happens: its copy in the store is then skipped. */
  own(event: RecordedEvent): void;
  /** Stops reading; resolves once a read under way has ended. */
  stop(): Promise<void>;
}

export interface BudgetFollowerOptions {
  readonly events: EventStore;
  readonly runId: string;
  readonly ledger: BudgetLedger;
  /** The last event already folded (or known not to matter); the follower reads from the one after it. */
  readonly afterSeq: number;
  readonly everyMs?: number;
}

/**
 * Feeds a run's budget ledger what the run's other processes spend: a run in a shared store has
 * workers on other hosts, whose model calls count against the same limits. Every second it reads
 * the run's budget events the store took since the last read and folds those this process did not
 * record itself, so the ledger sees every event of the run once, the others' within about a
 * second. A read that fails is tried again at the next beat.
 */
export function followRunBudget(options: BudgetFollowerOptions): BudgetFollower {
  const { events, runId, ledger } = options;
  const own = new Set<string>();
  const budgetTypes: ReadonlySet<string> = new Set(BUDGET_EVENT_TYPES);
  let afterSeq = options.afterSeq;
  const read = async (): Promise<void> => {
    for (const event of await events.read({ runId, types: [...BUDGET_EVENT_TYPES], afterSeq })) {
      afterSeq = Math.max(afterSeq, event.seq);
      if (!own.delete(event.id)) ledger.observe(event);
    }
  };
  let reading: Promise<void> | null = null;
  const timer = setInterval(() => {
    reading ??= read()
      .catch(() => undefined)
      .finally(() => {
        reading = null;
      });
  }, options.everyMs ?? FOLLOW_EVERY_MS);
  return {
    own(event) {
      if (budgetTypes.has(event.type)) own.add(event.id);
    },
    async stop() {
      clearInterval(timer);
      await reading;
    },
  };
}
