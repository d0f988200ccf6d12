import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { createMainHealth, splitByRedMain } from './main-health.js';

function checked(commit: string, passed: boolean, failures: string[]): EventBody {
  return {
    type: 'green.checked',
    data: { commit, command: 'npm test', passed, exitCode: passed ? 0 : 1, timedOut: false, durationMs: 5, outputTail: '', failures, trigger: 'landings', landed: 1 },
  };
}

describe('main health', () => {
  it("follows the green loop's last snapshot: red with its failures, then nothing once one passes", async () => {
    const events = createMemoryEventStore();
    const health = createMainHealth(events, 'run-1');
    expect(await health.red()).toBeNull();
    events.append({ ...checked('c1', false, ['not ok 1 - pads']), runId: 'run-1', agentId: 'system' });
    // Another run's snapshot in the same store is not this run's main.
    events.append({ ...checked('x9', true, []), runId: 'run-2', agentId: 'system' });
    expect(await health.red()).toEqual({ commit: 'c1', command: 'npm test', failures: ['not ok 1 - pads'] });
    events.append({ ...checked('c2', false, ['not ok 1 - pads', 'not ok 2 - cases']), runId: 'run-1', agentId: 'system' });
    expect((await health.red())?.failures).toEqual(['not ok 1 - pads', 'not ok 2 - cases']);
    events.append({ ...checked('c3', true, []), runId: 'run-1', agentId: 'system' });
    expect(await health.red()).toBeNull();
  });

  it('tells the failures main already showed from new ones', () => {
    const red = { commit: 'c1', command: 'npm test', failures: ['a', 'b'] };
    expect(splitByRedMain(['b', 'c'], red)).toEqual({ already: ['b'], fresh: ['c'] });
    expect(splitByRedMain(['b', 'c'], null)).toEqual({ already: [], fresh: ['b', 'c'] });
  });
});
