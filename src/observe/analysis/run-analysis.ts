import type { ColonyEvent } from '../../events/event-types.js';
import { createRunAnalysisFold } from './run-analysis-fold.js';
import type { RunAnalysis } from './types.js';

/**
 * The analysis of one run folded from `events` (in seq order): the given run, or, without one,
 * the run started last among them. Keeps per-agent and per-task figures, never the events.
 */
export function analyzeRun(events: Iterable<ColonyEvent>, runId?: string): RunAnalysis {
  const fold = createRunAnalysisFold(runId === undefined ? {} : { runId });
  for (const event of events) fold.add(event);
  return fold.result();
}
