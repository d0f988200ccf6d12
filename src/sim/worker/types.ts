import type { WorkerCall } from './worker-tool-calls.js';

/** What the sim means to say and do this turn, before any fault is applied. */
export interface PlannedTurn {
  readonly text: string;
  readonly calls: readonly WorkerCall[];
}
