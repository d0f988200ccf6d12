import { describe, expect, it } from 'vitest';
import { describeEventStoreConformance } from '../testing/event-store.conformance.js';
import { toolStartedInput } from '../testing/event-store-fixtures.js';
import { createMemoryEventStore } from './memory-event-store.js';

describeEventStoreConformance('memory', async () => {
  const store = createMemoryEventStore();
  return { store, cleanup: () => store.close() };
});

describe('createMemoryEventStore', () => {
  it('stamps events with the clock it is given, never going back', async () => {
    const times = [2_000, 1_500, 2_500];
    const store = createMemoryEventStore({ now: () => times.shift() ?? 0 });
    const subject = { runId: 'run-1', agentId: 'agent-a' };
    const stamps = [1, 2, 3].map((step) => store.append(toolStartedInput(subject, step)).ts);
    expect(stamps).toEqual([2_000, 2_000, 2_500]);
  });
});
