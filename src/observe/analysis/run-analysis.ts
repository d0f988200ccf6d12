import type { AgentRole, ColonyEvent } from '../../events/event-types.js';
import { createRunAnalysisFold } from './run-analysis-fold.js';
import type {
  CommandAnalysis,
  ConflictAnalysis,
  CostAnalysis,
  CrashedTask,
  LandingTimes,
  LoopAnalysis,
  MainHealth,
  RetryAnalysis,
  RoleUsage,
  StallAnalysis,
} from './run-analysis-sections.js';

export type * from './run-analysis-sections.js';

export { createRunAnalysisFold, type RunAnalysisFold, type RunAnalysisFoldOptions } from './run-analysis-fold.js';
export { formatRunAnalysis } from './format-run-analysis.js';

/**
 * The questions a person debugging a run asks, answered from the event log alone: what was
 * slow, what kept failing, who stalled or looped, where merges collided, what was retried and
 * why, what crashed, where the money went, how long work took to land and how often main was
 * red. Plain data with stable names: scripts read it as JSON (`colony analyze --json`).
 * Lists are ranked, the most telling first, and capped at a few entries; counts beside them
 * (`runs`, `failingTotal`, `total`, `count`) say how many there were in all.
 */
export interface RunAnalysis {
  /** The run analysed; null when no event of a run was folded. */
  readonly runId: string | null;
  /** Events of the run folded. */
  readonly events: number;
  readonly commands: CommandAnalysis;
  readonly stalls: StallAnalysis;
  readonly loops: LoopAnalysis;
  readonly conflicts: ConflictAnalysis;
  readonly retries: RetryAnalysis;
  /** Tasks whose agent crashed, in the order they crashed; every one of them, not capped. */
  readonly crashes: readonly CrashedTask[];
  readonly cost: CostAnalysis;
  /** Tokens and cost of every model call (compaction summaries included), by the role of the agent that made it. */
  readonly tokensByRole: Readonly<Record<AgentRole, RoleUsage>>;
  readonly timeToLand: LandingTimes;
  readonly mainHealth: MainHealth;
}

/**
 * The analysis of one run folded from `events` (in seq order): the given run, or, without one,
 * the run started last among them. Keeps per-agent and per-task figures, never the events.
 */
export function analyzeRun(events: Iterable<ColonyEvent>, runId?: string): RunAnalysis {
  const fold = createRunAnalysisFold(runId === undefined ? {} : { runId });
  for (const event of events) fold.add(event);
  return fold.result();
}
