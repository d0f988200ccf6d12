import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody } from '../events/event-types.js';
import { createBudgetLedger, type BudgetLedger, type RunLimits } from './budget-ledger.js';

let seq = 0;

function event(agentId: string, body: EventBody): ColonyEvent {
  seq += 1;
  return { ...body, seq, v: 1, id: `event-${seq}`, runId: 'run-1', agentId, ts: 0 } as ColonyEvent;
}

interface Harness {
  readonly ledger: BudgetLedger;
  readonly recorded: EventBody[];
  readonly clock: { now: number };
  task(taskId: string, parentTaskId: string | null, kind: 'worker' | 'planner', scope?: string): void;
  start(agentId: string, taskId: string): void;
  end(agentId: string): void;
  call(agentId: string, inputTokens: number, outputTokens: number, costUsd?: number | null): void;
  of(type: EventBody['type']): EventBody[];
}

function harness(limits: Partial<RunLimits>): Harness {
  const recorded: EventBody[] = [];
  const clock = { now: 1_000 };
  const ledger = createBudgetLedger({
    limits: { tokens: null, usd: null, maxHours: null, ...limits },
    startedAt: 1_000,
    now: () => clock.now,
    record: (body) => recorded.push(body),
  });
  return {
    ledger,
    recorded,
    clock,
    task: (taskId, parentTaskId, kind, scope) =>
      ledger.observe(
        event('system', { type: 'task.created', data: { taskId, parentTaskId, kind, title: taskId, scope: scope ?? null, retryOf: null } }),
      ),
    start: (agentId, taskId) =>
      ledger.observe(
        event(agentId, {
          type: 'agent.started',
          data: { role: 'worker', taskId, title: taskId, model: 'sim', systemPrompt: '', task: '', tools: [] },
        }),
      ),
    end: (agentId) => ledger.observe(event(agentId, { type: 'agent.ended', data: { status: 'done', steps: 1, reason: '' } })),
    call: (agentId, inputTokens, outputTokens, costUsd = 0) =>
      ledger.observe(
        event(agentId, {
          type: 'model.responded',
          data: {
            step: 1,
            text: '',
            toolCalls: [],
            finishReason: 'stop',
            usage: { inputTokens, outputTokens, cachedInputTokens: 0 },
            costUsd,
            durationMs: 1,
            attempts: 1,
          },
        }),
      ),
    of: (type) => recorded.filter((body) => body.type === type),
  };
}

describe('the budget ledger', () => {
  it('counts a call against its scope and every scope above it, and gives a delegated subtree half of what its parent has left', () => {
    const run = harness({ tokens: 10_000, usd: 2 });
    run.task('root', null, 'planner');
    run.start('planner-root', 'root');
    run.call('planner-root', 1_500, 500, 0.4);
    run.task('slice', 'root', 'planner', 'src/slice/');
    expect(run.of('budget.allotted')).toEqual([
      { type: 'budget.allotted', data: { taskId: 'slice', parentTaskId: 'root', tokens: 4_000, usd: 0.8 } },
    ]);
    run.task('deeper', 'slice', 'planner', 'src/slice/deeper/');
    expect(run.of('budget.allotted')[1]).toMatchObject({ data: { taskId: 'deeper', tokens: 2_000, usd: 0.4 } });

    // A worker two levels down spends against its planner's subtree, the one above, and the run.
    run.task('work', 'deeper', 'worker');
    run.start('worker-1', 'work');
    run.call('worker-1', 600, 0, 0.1);
    expect(run.of('budget.warned')).toEqual([]);
    run.call('worker-1', 700, 0, 0.1);
    // deeper: 1,300 of 2,000 tokens spent plus 700 held for worker-1's last call: used up.
    expect(run.of('budget.warned')).toEqual([
      { type: 'budget.warned', data: { taskId: 'deeper', scope: 'subtree', measure: 'tokens', spent: 1_300, limit: 2_000 } },
    ]);
    expect(run.of('budget.exhausted')).toEqual([
      {
        type: 'budget.exhausted',
        data: { taskId: 'deeper', scope: 'subtree', measure: 'tokens', spent: 1_300, limit: 2_000, reserved: 700, agents: 1 },
      },
    ]);
    // The run and the slice above still have room; a sibling slice may start, nothing below `deeper` may.
    expect(run.ledger.runExhaustion()).toBeNull();
    run.task('sibling', 'slice', 'worker');
    expect(run.ledger.blocksStart('sibling')).toBeNull();
    run.task('late', 'deeper', 'worker');
    expect(run.ledger.blocksStart('late')).toMatchObject({ taskId: 'deeper', measure: 'tokens', what: "the subtree src/slice/deeper/'s token budget of 2,000 tokens was used up" });
  });

  it('warns once at 80% and declares a limit used up once, when what is left no longer covers one call per running agent', () => {
    const run = harness({ tokens: 10_000 });
    run.task('root', null, 'planner');
    run.task('a', 'root', 'worker');
    run.task('b', 'root', 'worker');
    run.start('worker-a', 'a');
    run.start('worker-b', 'b');
    run.call('worker-a', 1_000, 0);
    run.call('worker-b', 1_000, 0);
    run.call('worker-b', 3_000, 0);
    // 5,000 spent, 1,000 + 3,000 held for the two agents' last calls: room for more.
    expect(run.recorded).toEqual([]);
    run.call('worker-a', 1_500, 0);
    // 6,500 spent is below 80%, but with 1,500 + 3,000 held back it reaches the limit: warned and used up at once.
    expect(run.of('budget.warned')).toHaveLength(1);
    expect(run.of('budget.exhausted')).toEqual([
      { type: 'budget.exhausted', data: { taskId: 'root', scope: 'run', measure: 'tokens', spent: 6_500, limit: 10_000, reserved: 4_500, agents: 2 } },
    ]);
    run.call('worker-a', 3_000, 0);
    run.call('worker-b', 3_000, 0);
    expect(run.of('budget.warned')).toHaveLength(1);
    expect(run.of('budget.exhausted')).toHaveLength(1);
    expect(run.ledger.runExhaustion()).toMatchObject({ measure: 'tokens', limit: 10_000, what: "the run's token budget of 10,000 tokens was used up" });
  });

  it('lets each agent make one last call once its scope is used up, then stops it; new tasks do not start', () => {
    const run = harness({ tokens: 1_000 });
    run.task('root', null, 'planner');
    run.task('a', 'root', 'worker');
    run.start('worker-a', 'a');
    expect(run.ledger.permitCall('a')).toEqual({ kind: 'go' });
    run.call('worker-a', 600, 100);
    expect(run.ledger.permitCall('a')).toMatchObject({ kind: 'final', exhaustion: { measure: 'tokens' } });
    run.call('worker-a', 800, 100);
    expect(run.ledger.permitCall('a')).toMatchObject({ kind: 'stop', exhaustion: { scope: 'run' } });
    expect(run.ledger.permitCall('a')).toMatchObject({ kind: 'stop' });
    run.end('worker-a');
    // A later attempt of the same task is a new agent: it is not even started.
    expect(run.ledger.blocksStart('a')).toMatchObject({ scope: 'run' });
    run.task('b', 'root', 'worker');
    expect(run.ledger.blocksStart('b')).toMatchObject({ scope: 'run' });
  });

  it('tells the planner that owns a scope of its 80% warning once', () => {
    const run = harness({ tokens: 100_000, usd: 1 });
    run.task('root', null, 'planner');
    run.start('planner-root', 'root');
    for (let call = 0; call < 79; call += 1) run.call('planner-root', 1_000, 0, 0.005);
    expect(run.ledger.takeWarnings('root')).toEqual([]);
    run.call('planner-root', 1_000, 0, 0.005);
    expect(run.of('budget.exhausted')).toEqual([]);
    expect(run.ledger.takeWarnings('root')).toEqual([{ scope: 'run', scopePath: null, measure: 'tokens', spent: 80_000, limit: 100_000 }]);
    expect(run.ledger.takeWarnings('root')).toEqual([]);
    expect(run.ledger.permitCall('root')).toEqual({ kind: 'go' });
    run.call('planner-root', 0, 0, 0.4);
    expect(run.ledger.takeWarnings('root')).toMatchObject([{ measure: 'usd', limit: 1 }]);
    expect(run.ledger.permitCall('root')).toMatchObject({ kind: 'final', exhaustion: { measure: 'usd', what: "the run's budget in US dollars of $1.00 was used up" } });
  });

  it('runs out of time on the clock even while no agent calls the model', () => {
    const run = harness({ maxHours: 0.01 });
    run.task('root', null, 'planner');
    run.start('planner-root', 'root');
    run.clock.now += 20_000;
    run.ledger.tick();
    expect(run.recorded).toEqual([]);
    run.clock.now += 9_000;
    run.ledger.tick();
    expect(run.of('budget.warned')).toEqual([
      { type: 'budget.warned', data: { taskId: 'root', scope: 'run', measure: 'time', spent: 29_000, limit: 36_000 } },
    ]);
    expect(run.ledger.permitCall('root')).toEqual({ kind: 'go' });
    run.clock.now += 7_000;
    expect(run.ledger.permitCall('root')).toMatchObject({ kind: 'final', exhaustion: { what: "the run's time limit of 36 seconds ran out" } });
    run.ledger.tick();
    expect(run.of('budget.exhausted')).toHaveLength(1);
  });

  it('leaves a scope without a limit alone: a run with only a time limit allots no share to subtrees', () => {
    const run = harness({ maxHours: 1 });
    run.task('root', null, 'planner');
    run.task('slice', 'root', 'planner', 'src/slice/');
    run.start('planner-slice', 'slice');
    run.call('planner-slice', 1_000_000, 1_000_000, 50);
    expect(run.recorded).toEqual([]);
    expect(run.ledger.permitCall('slice')).toEqual({ kind: 'go' });
  });
});
