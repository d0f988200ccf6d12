import type { HandoffMessage } from '../reading/handoff-message.js';
import type { SpecModule } from '../../spec/colony-spec.js';

/** Where a module stands: never given to a task, with a task, on main, or in need of another attempt. */
export type ModulePhase = 'unpublished' | 'open' | 'landed' | 'not-landed' | 'failing';

/**
 * What the sim planner knows about its modules and tasks, derived from its conversation
 * alone: task ids from its own create_task/delegate results, which modules each carried
 * (from the colony-spec in the brief it wrote), the handoffs that came back, its test runs.
 * After a compaction it starts from the ledger its summary carried (planner-state.ts).
 */

export interface PublishedTask {
  readonly id: string;
  readonly kind: 'worker' | 'planner';
  readonly title: string;
  readonly modulePaths: readonly string[];
  handoff: HandoffMessage | null;
}

export interface ModuleRecord {
  readonly module: SpecModule;
  phase: ModulePhase;
  /** Tasks (worker, delegated, fix) that carried this module. */
  attempts: number;
  latestTask: PublishedTask | null;
  /** What went wrong, for the next brief and the final report: only the last is ever read. */
  problems: string[];
  /**
   * The tests of this module that fail on main: found failing (by a test run or colony's green
   * check) when phase is 'failing'; those its open task was published to fix when 'open'.
   */
  failingTests: string[];
  /**
   * Failures colony's green check reported while a task of this module was open (and not one
   * published to fix them): the module becomes 'failing' when that task lands.
   */
  pendingFailures: string[];
  /** create_task or delegate calls for this module that the harness refused. */
  publishErrors: number;
}

/** A run of the project's tests on main, as much of it as the planner acts on. */
export interface TestRun {
  readonly position: number;
  readonly statusLine: string;
  /** How many tests passed, when the output said. */
  readonly passCount: number | null;
  readonly passed: boolean;
  readonly failingCount: number;
  /** Failing test names that match no function of this planner's modules. */
  readonly unmapped: readonly string[];
}

/** colony's refusal of a done finish while main's release snapshot fails. */
export interface ReleaseRefusal {
  /** The position of the refused finish call. */
  readonly position: number;
  /** The failure lines it gave, as written. */
  readonly failures: readonly string[];
  /** Those that name a test of none of this planner's modules. */
  readonly unmapped: readonly string[];
}

export interface PlannerLedger {
  readonly modules: readonly ModuleRecord[];
  readonly tasks: readonly PublishedTask[];
  /** Position of the last handoff in the conversation; -1 when none arrived. */
  readonly lastHandoffPosition: number;
  readonly lastTestRun: TestRun | null;
  /** Test command calls since the last handoff that did not come back as a command report. */
  readonly testRunErrors: readonly string[];
  /** The last refused finish; null when none was. */
  readonly releaseRefusal: ReleaseRefusal | null;
}

/** Notes and concerns of a failed worker handoff quoted in the retry's brief (and all a summary keeps of them). */
export const HANDOFF_NOTES_QUOTED = 3;

export const HANDOFF_CONCERNS_QUOTED = 2;
