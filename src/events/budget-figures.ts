import type { BudgetMeasure } from './event-fields.js';

/**
 * Budget figures in words, the same for agents and for people: `12,345 tokens`, `$0.42`,
 * `6 minutes`.
 */
export function formatAmount(measure: BudgetMeasure, amount: number): string {
  switch (measure) {
    case 'tokens':
      return `${Math.round(amount).toLocaleString('en-US')} tokens`;
    case 'usd':
      return `$${amount.toFixed(amount < 1 ? 4 : 2)}`;
    case 'time':
      return duration(amount);
  }
}

function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} minutes`;
  return `${(minutes / 60).toFixed(1)} hours`;
}

const LIMIT_NAMES: Readonly<Record<BudgetMeasure, string>> = { tokens: 'token budget', usd: 'budget in US dollars', time: 'time limit' };

/** The limit of a scope, in words: `the run's token budget of 100,000 tokens`. */
export function limitName(scope: 'run' | 'subtree', path: string | null, measure: BudgetMeasure, limit: number): string {
  const whose = scope === 'run' ? "the run's" : `the subtree ${path ?? ''}'s`;
  return `${whose} ${LIMIT_NAMES[measure]} of ${formatAmount(measure, limit)}`;
}

/** A used-up limit, in words: `the run's token budget of 100,000 tokens was used up`, `the run's time limit of 36 seconds ran out`. */
export function describeLimit(scope: 'run' | 'subtree', path: string | null, measure: BudgetMeasure, limit: number): string {
  return `${limitName(scope, path, measure, limit)} ${measure === 'time' ? 'ran out' : 'was used up'}`;
}
