import type { ColonyEvent } from '../../events/event-types.js';
import { createRunStatusFold } from './run-status-fold.js';
import type { FoldRunStatusInput, RunStatus } from './types.js';

/**
 * The status of one run, folded from the event log and the task store: the given run, or the
 * one started last. Null when `events` holds no `run.started` for it. Tasks and handoffs of
 * other runs are ignored, so callers may pass a whole store's worth.
 */
export function foldRunStatus(input: FoldRunStatusInput): RunStatus | null {
  const runId = input.runId ?? latestRunId(input.events);
  if (runId === null) return null;
  const fold = createRunStatusFold({ runId });
  for (const event of input.events) fold.add(event);
  return fold.snapshot(input);
}

function latestRunId(events: readonly ColonyEvent[]): string | null {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    if (event?.type === 'run.started') return event.runId;
  }
  return null;
}
