import type { Scenario } from '../scenario/scenario.js';
import type { SimOptions } from '../sim-options.js';
import type { WorkerFacts } from './worker-facts.js';
import type { WorkerCall } from './worker-tool-calls.js';

/** What the sim means to say and do this turn, before any fault is applied. */
export interface PlannedTurn {
  readonly text: string;
  readonly calls: readonly WorkerCall[];
}

/** What the worker decides its next step from: its task, what its calls found, and colony's standing word. */
export interface StepContext {
  readonly scenario: Scenario;
  readonly facts: WorkerFacts;
  readonly taskText: string;
  readonly options: SimOptions;
  readonly tools: ReadonlySet<string>;
  /** What colony's standing notice says fails on main already; null when it shows none. */
  readonly mainFailing: readonly string[] | null;
}
