import type { ModelCallCheck } from '../../agent/agent-loop.js';
import type { Handoff } from '../../events/handoff.js';
import { formatAmount } from '../../events/budget-figures.js';
import type { BudgetLedger, BudgetWarning, Exhaustion } from './budget-ledger.js';
import { fillPlaceholders, type PromptName, type PromptSet } from '../prompts/prompt-set.js';

const FINAL_CALL: Readonly<Record<'worker' | 'planner', PromptName>> = {
  worker: 'budget-final-worker',
  planner: 'budget-final-planner',
};

/** One agent's side of the run's budget, asked before each of its model calls. */
export interface AgentBudget {
  /**
   * Go ahead (with any warning to tell a planner first), the one last call (with the notice
   * that says so), or stop without a call once that was made.
   */
  beforeModelCall(): ModelCallCheck;
  /**
   * Asked while the agent is parked: once its scope's budget or the run's time is used up, it
   * stops waiting (its last call could not reach the provider anyway) and ends as stopped.
   */
  whileParked(): string | null;
  /** The limit that stopped the agent, or null while none did. */
  stoppedBy(): Exhaustion | null;
}

/**
 * The budget of the agent that runs `taskId`: a worker, or the planner that owns the task's
 * scope. Its notices are the run's prompts `budget-warning` and `budget-final-<role>`.
 */
export function createAgentBudget(ledger: BudgetLedger, taskId: string, role: 'worker' | 'planner', prompts: PromptSet): AgentBudget {
  let stopped: Exhaustion | null = null;
  return {
    beforeModelCall() {
      const permit = ledger.permitCall(taskId);
      if (permit.kind === 'stop') {
        stopped = permit.exhaustion;
        return { stop: `stopped: ${permit.exhaustion.what}` };
      }
      if (permit.kind === 'final') return fillPlaceholders(prompts.text(FINAL_CALL[role]), { WHAT: permit.exhaustion.what });
      if (role === 'worker') return null;
      const warnings = ledger.takeWarnings(taskId);
      return warnings.length === 0 ? null : warnings.map((warning) => warningText(warning, prompts.text('budget-warning'))).join('\n\n');
    },
    whileParked() {
      ledger.tick();
      const exhaustion = ledger.blocksStart(taskId);
      if (exhaustion === null) return null;
      stopped = exhaustion;
      return `stopped: ${exhaustion.what}, while the agent waited for its provider`;
    },
    stoppedBy: () => stopped,
  };
}

/** The reminder a planner gets when a scope it owns has spent 80% of a limit, from the `budget-warning` prompt `template`. */
export function warningText(warning: BudgetWarning, template: string): string {
  const { measure, spent, limit } = warning;
  const percent = Math.floor((100 * spent) / limit);
  const left = formatAmount(measure, Math.max(0, limit - spent));
  const figures =
    measure === 'time'
      ? `${percent}% of ${warning.scope === 'run' ? "the run's" : 'your scope’s'} time limit of ${formatAmount(measure, limit)} has passed; ${left} ${left.endsWith('s') ? 'are' : 'is'} left.`
      : `${warning.scope === 'run' ? 'the run has' : `your scope ${warning.scopePath ?? ''} has`} spent ${formatAmount(measure, spent)} of its ${formatAmount(measure, limit)} (${percent}%); ${left} left.`;
  return fillPlaceholders(template, { FIGURES: figures });
}

/**
 * The handoff colony writes for an agent the budget stopped before it handed off. Blocked, not
 * failed: nothing went wrong with the work, it ran out of budget, and a planner can pick it up
 * again with more.
 */
export function budgetStopHandoff(fields: {
  readonly exhaustion: Exhaustion;
  readonly doing: readonly string[];
  readonly commits?: readonly string[];
  readonly notes?: readonly string[];
  readonly summary?: string;
}): Handoff {
  return {
    status: 'blocked',
    summary: fields.summary ?? `stopped: ${fields.exhaustion.what}, before the agent handed off on its own.`,
    commits: [...(fields.commits ?? [])],
    evidence: '',
    notes: [...fields.doing, ...(fields.notes ?? [])],
    concerns: [],
    deviations: [],
    findings: [],
    feedback: [],
    followUps: ['Finish this task in a run with budget left; check main first for what landed.'],
    synthetic: true,
  };
}

/** The handoff of a task no agent started because its scope's budget was used up before. */
export function unstartedHandoff(exhaustion: Exhaustion): Handoff {
  return budgetStopHandoff({
    exhaustion,
    summary: `not started: ${exhaustion.what} before an agent could take this task.`,
    doing: ['No agent started on this task: nothing was done.'],
  });
}
