import { describe, expect, it } from 'vitest';
import { stoppedReason } from '../../events/agent-stops.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { createRunErrorsFold } from './run-errors.js';

describe('the run errors fold', () => {
  it('counts a failed agent as a failure, and an agent stopped with its run, or by a person, as none', async () => {
    const store = createMemoryEventStore({ now: () => 1_000 });
    const failed = (agentId: string, reason: string) => store.append({ runId: 'run-a', agentId, type: 'agent.failed', data: { steps: 3, reason, lastToolCall: null } });
    failed('worker-a', 'the model failed: unreachable after 5 attempt(s)');
    failed('worker-b', stoppedReason('the run was cancelled'));
    failed('worker-c', stoppedReason('stopped from the terminal UI'));
    const fold = createRunErrorsFold();
    for (const event of await store.read()) fold.add(event);
    const errors = fold.snapshot();
    expect(errors.counts['agent-failure']).toBe(1);
    expect(errors.recent.map((entry) => entry.agentId)).toEqual(['worker-a']);
  });
});
