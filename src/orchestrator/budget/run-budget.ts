import type { EventBody, EventData } from '../../events/event-types.js';
import { createBudgetLedger, type BudgetLedger, type RunLimits } from './budget-ledger.js';

/** The run's budget ledger; none when no limit was set. */
export function createRunBudget(limits: RunLimits, startedAt: number, record: (body: EventBody) => void): BudgetLedger | undefined {
  if (limits.tokens === null && limits.usd === null && limits.maxHours === null) return undefined;
  return createBudgetLedger({ limits, startedAt, now: Date.now, record });
}

/** What `budget.set` records of a run's limits, its deadline worked out. */
export function budgetSet(limits: RunLimits, startedAt: number): EventData<'budget.set'> {
  const deadline = limits.maxHours === null ? null : startedAt + limits.maxHours * 3_600_000;
  return { tokens: limits.tokens, usd: limits.usd, maxHours: limits.maxHours, deadline };
}
