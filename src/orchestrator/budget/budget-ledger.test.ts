import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody } from '../../events/event-types.js';
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

  it('keeps the promise when first calls are in flight: a call that lands past the limit is its agent\'s last', () => {
    // Four workers whose first calls are all in flight hold back nothing yet (no answer, no
    // estimate). Were each to get a last call after its answer lands, they would spend 40,000
    // on a limit of 10,000 with calls of 5,000: past the promised 10,000 + 5,000 x 4.
    const run = harness({ tokens: 10_000 });
    run.task('root', null, 'planner');
    const workers = ['a', 'b', 'c', 'd'];
    for (const task of workers) {
      run.task(task, 'root', 'worker');
      run.start(`worker-${task}`, task);
      expect(run.ledger.permitCall(task)).toEqual({ kind: 'go' });
    }
    // A fifth agent is between calls (running a command, say) when the limit is used up.
    run.task('e', 'root', 'worker');
    run.start('worker-e', 'e');
    for (const task of workers) run.call(`worker-${task}`, 4_000, 1_000);
    expect(run.of('budget.exhausted')).toMatchObject([{ data: { spent: 5_000, reserved: 5_000, agents: 5 } }]);
    // a and b landed within the limit (5,000, then 10,000): they keep their last calls. c and d
    // landed past it: that was their one call past the limit, so they stop and colony hands off.
    expect(workers.map((task) => run.ledger.permitCall(task).kind)).toEqual(['final', 'final', 'stop', 'stop']);
    // e had nothing in flight: it gets its one last call too.
    expect(run.ledger.permitCall('e')).toMatchObject({ kind: 'final', exhaustion: { scope: 'run' } });
    for (const task of ['a', 'b', 'e']) {
      run.call(`worker-${task}`, 4_000, 1_000);
      expect(run.ledger.permitCall(task)).toMatchObject({ kind: 'stop' });
    }
    // 35,000 spent: the limit plus one call of 5,000 for each of the five agents, and no more.
  });

  it('passes a limit by at most one call per agent in every interleaving of calls, starts and ends', () => {
    for (let seed = 1; seed <= 300; seed += 1) expectOneCallPerAgentAtMost(seed);
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

/** A small deterministic source of numbers in [0, 1), so an interleaving that fails can be replayed by its seed. */
function seededNumbers(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
}

type SimulatedAgent = { state: 'waiting' } | { state: 'idle' } | { state: 'calling'; tokens: number } | { state: 'ended' };

/**
 * One run of agents that start, call and end in an order drawn from `seed`, some under a
 * delegated subtree: every scope whose limit was used up spent at most its limit plus the
 * run's largest call for each agent that had a call land from that moment on.
 */
function expectOneCallPerAgentAtMost(seed: number): void {
  const random = seededNumbers(seed);
  const pick = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
  const run = harness({ tokens: pick(5_000, 60_000) });
  run.task('root', null, 'planner');
  run.task('slice', 'root', 'planner', 'src/slice/');
  const agents = new Map<string, SimulatedAgent>();
  const inSlice = new Set<string>();
  const workers = pick(1, 7);
  for (let index = 0; index < workers; index += 1) {
    const task = `task-${index}`;
    const slice = random() < 0.4;
    run.task(task, slice ? 'slice' : 'root', 'worker');
    if (slice) inSlice.add(task);
    agents.set(task, { state: 'waiting' });
  }
  const calls: { task: string; tokens: number; landedAt: number }[] = [];
  const exhaustions: { at: number; taskId: string; limit: number }[] = [];
  let step = 0;
  for (; step < 5_000; step += 1) {
    const live = [...agents].filter(([, agent]) => agent.state !== 'ended');
    const chosen = live[pick(0, live.length - 1)];
    if (chosen === undefined) break;
    const [task, agent] = chosen;
    const known = run.of('budget.exhausted').length;
    if (agent.state === 'waiting') {
      const blocked = run.ledger.blocksStart(task) !== null;
      if (!blocked) run.start(`agent-${task}`, task);
      agents.set(task, { state: blocked ? 'ended' : 'idle' });
    } else if (agent.state === 'idle') {
      const permit = run.ledger.permitCall(task);
      if (permit.kind === 'stop' || random() < 0.03) {
        run.end(`agent-${task}`);
        agents.set(task, { state: 'ended' });
      } else agents.set(task, { state: 'calling', tokens: pick(100, 6_000) });
    } else if (agent.state === 'calling') {
      run.call(`agent-${task}`, agent.tokens, 0);
      calls.push({ task, tokens: agent.tokens, landedAt: step });
      agents.set(task, { state: 'idle' });
    }
    for (const body of run.of('budget.exhausted').slice(known)) {
      if (body.type === 'budget.exhausted') exhaustions.push({ at: step, taskId: body.data.taskId, limit: body.data.limit });
    }
  }
  expect(step, `seed ${seed}: the agents never ended`).toBeLessThan(5_000);
  const largest = Math.max(0, ...calls.map((call) => call.tokens));
  for (const exhaustion of exhaustions) {
    const mine = calls.filter((call) => exhaustion.taskId === 'root' || inSlice.has(call.task));
    // The call whose answer used the limit up landed at that moment: it was in flight until then.
    const perAgent = new Map<string, number>();
    for (const call of mine.filter((each) => each.landedAt >= exhaustion.at)) perAgent.set(call.task, (perAgent.get(call.task) ?? 0) + 1);
    // The one in flight and the last: never more.
    for (const [task, count] of perAgent) expect(count, `seed ${seed}: ${task} had ${count} calls land past ${exhaustion.taskId}'s limit`).toBeLessThanOrEqual(2);
    const spent = mine.reduce((sum, call) => sum + call.tokens, 0);
    expect(spent, `seed ${seed}: ${exhaustion.taskId} spent past the promise`).toBeLessThanOrEqual(exhaustion.limit + largest * perAgent.size);
  }
}
