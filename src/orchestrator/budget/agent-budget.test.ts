import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody } from '../../events/event-types.js';
import { createAgentBudget, unstartedHandoff } from './agent-budget.js';
import { createBudgetLedger } from './budget-ledger.js';
import { defaultPromptSet } from '../prompts/prompt-set.js';

function observe(ledger: ReturnType<typeof createBudgetLedger>, agentId: string, body: EventBody): void {
  ledger.observe({ ...body, seq: 1, v: 1, id: 'event', runId: 'run-1', agentId, ts: 0 } as ColonyEvent);
}

function responded(tokens: number): EventBody {
  return {
    type: 'model.responded',
    data: { step: 1, text: '', toolCalls: [], finishReason: 'stop', usage: { inputTokens: tokens, outputTokens: 0, cachedInputTokens: 0 }, costUsd: 0, durationMs: 1, attempts: 1 },
  };
}

function started(taskId: string): EventBody {
  return { type: 'agent.started', data: { role: 'worker', taskId, title: taskId, model: 'sim', systemPrompt: '', task: '', tools: [] } };
}

describe('an agent’s budget', () => {
  it('reminds a planner at 80%, tells each agent its last call in words for its role, then stops it', () => {
    const ledger = createBudgetLedger({ limits: { tokens: 100_000, usd: null, maxHours: null }, startedAt: 0, now: () => 0, record: () => undefined });
    observe(ledger, 'system', { type: 'task.created', data: { taskId: 'root', parentTaskId: null, kind: 'planner', title: 'goal', scope: null, retryOf: null } });
    observe(ledger, 'system', { type: 'task.created', data: { taskId: 'work', parentTaskId: 'root', kind: 'worker', title: 'work', scope: null, retryOf: null } });
    observe(ledger, 'planner-1', started('root'));
    observe(ledger, 'worker-1', started('work'));
    const planner = createAgentBudget(ledger, 'root', 'planner', defaultPromptSet());
    const worker = createAgentBudget(ledger, 'work', 'worker', defaultPromptSet());
    for (let call = 0; call < 80; call += 1) observe(ledger, 'worker-1', responded(1_000));

    expect(worker.beforeModelCall()).toBeNull();
    const reminder = planner.beforeModelCall();
    expect(reminder).toBe(
      'Budget warning: the run has spent 80,000 tokens of its 100,000 tokens (80%); 20,000 tokens left.\n' +
        'Prioritise now: publish only the work that matters most, let what is in flight finish rather than starting new slices, and plan to finish your scope before the budget is used up. When it is used up, nothing new starts and every agent gets at most one last model call to hand off.',
    );
    expect(planner.beforeModelCall()).toBeNull();

    observe(ledger, 'worker-1', responded(18_000));
    expect(worker.beforeModelCall()).toMatch(/^Budget used up: the run's token budget of 100,000 tokens was used up\. This is your last model call\.\nCall submit_handoff in this answer/);
    expect(planner.beforeModelCall()).toMatch(/^Budget used up: .*\nCall finish in this answer/);
    expect(worker.stoppedBy()).toBeNull();
    expect(worker.beforeModelCall()).toEqual({ stop: "stopped: the run's token budget of 100,000 tokens was used up" });
    expect(worker.stoppedBy()).toMatchObject({ scope: 'run', measure: 'tokens', limit: 100_000 });

    const handoff = unstartedHandoff(worker.stoppedBy() ?? expect.fail('stopped'));
    expect(handoff).toMatchObject({ status: 'blocked', synthetic: true, summary: expect.stringMatching(/^not started: the run's token budget/) });
  });

  it('ends a parked agent once the run’s time is up, and not before', () => {
    let now = 0;
    const ledger = createBudgetLedger({ limits: { tokens: null, usd: null, maxHours: 1 }, startedAt: 0, now: () => now, record: () => undefined });
    observe(ledger, 'system', { type: 'task.created', data: { taskId: 'root', parentTaskId: null, kind: 'planner', title: 'goal', scope: null, retryOf: null } });
    observe(ledger, 'system', { type: 'task.created', data: { taskId: 'work', parentTaskId: 'root', kind: 'worker', title: 'work', scope: null, retryOf: null } });
    observe(ledger, 'worker-1', started('work'));
    const worker = createAgentBudget(ledger, 'work', 'worker', defaultPromptSet());
    now = 59 * 60_000;
    expect(worker.whileParked()).toBeNull();
    expect(worker.stoppedBy()).toBeNull();
    now = 61 * 60_000;
    expect(worker.whileParked()).toMatch(/^stopped: the run's time limit .*, while the agent waited for its provider$/);
    expect(worker.stoppedBy()).toMatchObject({ scope: 'run', measure: 'time' });
  });
});
