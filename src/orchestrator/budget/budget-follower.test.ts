import { describe, expect, it } from 'vitest';
import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { followRunBudget } from './budget-follower.js';
import { createBudgetLedger } from './budget-ledger.js';

function call(inputTokens: number): EventBody {
  return {
    type: 'model.responded',
    data: { step: 1, text: '', toolCalls: [], finishReason: 'stop', usage: { inputTokens, outputTokens: 0, cachedInputTokens: 0 }, costUsd: 0, durationMs: 1, attempts: 1 },
  };
}

function started(taskId: string): EventBody {
  return { type: 'agent.started', data: { role: 'worker', taskId, title: taskId, model: 'sim', systemPrompt: '', task: '', tools: [] } };
}

function created(taskId: string, parentTaskId: string | null, kind: 'worker' | 'planner'): EventBody {
  return { type: 'task.created', data: { taskId, parentTaskId, kind, title: taskId, scope: null, retryOf: null } };
}

const ended: EventBody = { type: 'agent.ended', data: { status: 'done', steps: 1, reason: '' } };

describe('following what the run’s other hosts spend', () => {
  it("folds the others' spend from the store once and its own not twice, so a limit counts the whole run's calls", async () => {
    const store = createMemoryEventStore();
    const recorded: EventBody[] = [];
    const ledger = createBudgetLedger({ limits: { tokens: 10_000, usd: null, maxHours: null }, startedAt: 0, now: () => 0, record: (body) => recorded.push(body) });
    // This process: it records an event and folds it at once, as the run's onEvent does.
    let follower: ReturnType<typeof followRunBudget> | null = null;
    const here = (agentId: string, body: EventBody): RecordedEvent => {
      const event = store.append({ ...body, runId: 'run-1', agentId });
      ledger.observe(event);
      follower?.own(event);
      return event;
    };
    // The run's start, on disk before the follower starts after it, as a run starts it.
    here('system', created('root', null, 'planner'));
    here('system', created('near', 'root', 'worker'));
    here('system', created('far', 'root', 'worker'));
    await store.flush();
    follower = followRunBudget({ events: store, runId: 'run-1', ledger, afterSeq: await store.lastSeq(), everyMs: 5 });
    try {
      here('worker-near', started('near'));
      for (let step = 0; step < 7; step += 1) here('worker-near', call(1_000));
      here('worker-near', ended);
      // Another host: its worker's events reach this process only through the store.
      const there = (agentId: string, body: EventBody) => store.append({ ...body, runId: 'run-1', agentId });
      there('worker-far', started('far'));
      there('worker-far', call(1_000));
      there('worker-far', ended);
      await store.flush();
      while (!recorded.some((body) => body.type === 'budget.warned')) await new Promise((resolve) => setTimeout(resolve, 5));
      // 8,000 of 10,000: warned at 80 %, not used up; its own calls counted twice would have made 15,000, and the other's left out 7,000.
      expect(recorded.find((body) => body.type === 'budget.warned')).toMatchObject({ data: { measure: 'tokens', spent: 8_000, limit: 10_000 } });
      expect(recorded.filter((body) => body.type !== 'budget.warned')).toEqual([]);
      expect(ledger.runExhaustion()).toBeNull();
      there('worker-far-2', started('far'));
      there('worker-far-2', call(1_500));
      while (ledger.runExhaustion() === null) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(ledger.runExhaustion()).toMatchObject({ measure: 'tokens', spent: 9_500 });
      // The other host's next worker is kept from starting, here as there.
      expect(ledger.blocksStart('far')).not.toBeNull();
    } finally {
      await follower.stop();
    }
  });
});
