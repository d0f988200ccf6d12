import type { AgentOutcome } from '../agent/agent-loop.js';
import type { AgentRecorder } from '../agent/types.js';
import type { Handoff } from '../events/handoff.js';
import type { EventBody, RecordedEvent } from '../events/event-types.js';
import type { EventStore } from '../store/events/event-store.js';
import type { DiskGuard } from './disk-guard.js';

/** An agent's recorder onto the run's event log: `flush` is the log's own promise (or the disk guard's). */
export interface EventStoreRecorder extends AgentRecorder {
  flush(): Promise<void>;
}

/**
 * Records an agent's events in the store under its id, telling `onEvent` each one as it is
 * recorded. With a disk guard, `flush` waits out a full disk rather than failing.
 */
export function createAgentRecorder(
  events: EventStore,
  runId: string,
  agentId: string,
  onEvent?: (event: RecordedEvent) => void,
  disk?: DiskGuard,
  /** Stops a flush's wait for disk space (the agent is stopped); its events stay buffered. */
  signal?: AbortSignal,
): EventStoreRecorder {
  const flushThroughGuard = (guard: DiskGuard) => (): Promise<void> => {
    const flushed = guard.flush(signal);
    // Callers that cannot wait (publishing, ending) leave the events buffered for the next
    // flush, which reports a failure to whoever awaits it: this one must not crash the process.
    flushed.catch(() => undefined);
    return flushed;
  };
  return {
    record(body: EventBody) {
      const event = events.append({ ...body, runId, agentId });
      onEvent?.(event);
    },
    flush: disk === undefined ? () => events.flush() : flushThroughGuard(disk),
  };
}

/**
 * Starts making the recorder's events durable without waiting for it: an agent that publishes
 * or ends goes on even while the disk is full. A failed flush leaves the events buffered for
 * the next one (the runner's, as it closes the task), which reports it to whoever awaits it.
 */
export function flushInBackground(recorder: AgentRecorder): void {
  Promise.resolve(recorder.flush()).catch(() => undefined);
}

/** The last events of any agent of the tree: how it failed (if it did) and how it ended. */
export function endAgent(recorder: AgentRecorder, outcome: AgentOutcome, handoff: Handoff): void {
  if (outcome.status === 'failed') {
    recorder.record({ type: 'agent.failed', data: { steps: outcome.steps, reason: outcome.reason, lastToolCall: outcome.lastToolCall } });
  }
  recorder.record({
    type: 'agent.ended',
    data: { status: handoff.status, steps: outcome.steps, reason: outcome.status === 'ended' ? 'handoff submitted' : outcome.reason },
  });
  flushInBackground(recorder);
}
