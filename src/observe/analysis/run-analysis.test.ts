import { beforeAll, describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody, RecordedEvent } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { HandoffStatus } from '../../events/handoff.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { handoffOf } from '../../store/testing/task-store-fixtures.js';
import { analyzeRun } from './run-analysis.js';
import { formatRunAnalysis } from './format-run-analysis.js';
import { createRunAnalysisFold } from './run-analysis-fold.js';
import type { RunAnalysis } from './types.js';

const T0 = Date.UTC(2026, 10, 29, 14, 0, 0);

/** An event log in a real (in-memory) store; each event is stamped at `ms` after T0, in order. */
function createLog() {
  let clock = T0;
  const store = createMemoryEventStore({ now: () => clock });
  return {
    store,
    add(ms: number, agentId: string, body: EventBody, runId = 'run-new'): RecordedEvent {
      clock = T0 + ms;
      return store.append({ ...body, runId, agentId });
    },
    /** Adds the event and gives it back as the log holds it, with its seq, for a fold fed one event at a time. */
    async stored(ms: number, agentId: string, body: EventBody, runId = 'run-new'): Promise<ColonyEvent> {
      clock = T0 + ms;
      const { id } = store.append({ ...body, runId, agentId });
      const stored = (await store.read({ afterSeq: (await store.lastSeq()) - 1 })).find((event) => event.id === id);
      if (stored === undefined) throw new Error(`the log does not hold the event ${id} just added`);
      return stored;
    },
    events: (): Promise<ColonyEvent[]> => store.read(),
  };
}

const runStarted: EventBody = { type: 'run.started', data: { mode: 'run', repo: '/srv/kit', model: 'sim', title: 'Build the kit' } };
const agentStarted = (role: AgentRole, taskId: string): EventBody => ({
  type: 'agent.started',
  data: { role, taskId, title: taskId, model: 'sim', systemPrompt: 'prompt', task: 'brief', tools: ['read_file'] },
});
const taskCreated = (taskId: string, parentTaskId: string | null, retryOf: string | null = null): EventBody => ({
  type: 'task.created',
  data: { taskId, parentTaskId, kind: taskId.startsWith('w') ? 'worker' : 'planner', title: `Title of ${taskId}`, scope: null, retryOf },
});
const claimed = (taskId: string, attempt: number): EventBody => ({ type: 'task.claimed', data: { taskId, kind: 'worker', attempt, holder: 'runner-1' } });
const responded = (inputTokens: number, outputTokens: number, costUsd: number): EventBody => ({
  type: 'model.responded',
  data: { step: 1, text: '', toolCalls: [], finishReason: 'tool-calls', usage: { inputTokens, outputTokens, cachedInputTokens: 0 }, costUsd, durationMs: 5, attempts: 1 },
});
const requested: EventBody = { type: 'model.requested', data: { step: 1, model: 'sim', messages: 3, chars: 900 } };
const toolStarted = (callId: string, name: string, input: unknown): EventBody => ({
  type: 'tool.started',
  data: { step: 1, callId, name, input: typeof input === 'string' ? input : JSON.stringify(input) },
});
const toolEnded = (callId: string, name: string, ok: boolean, output: string, durationMs = 1, cpuMs?: number): EventBody => ({
  type: 'tool.ended',
  data: { step: 1, callId, name, ok, output, durationMs, ...(cpuMs === undefined ? {} : { cpuMs }) },
});
const landed = (autoResolved: string[] = []): EventBody => ({
  type: 'merge.landed',
  data: { commit: 'a'.repeat(40), mainBefore: 'b'.repeat(40), attempts: 1, files: ['src/index.js'], durationMs: 5, autoResolved },
});
const conflicted = (files: string[]): EventBody => ({ type: 'merge.conflicted', data: { files, mainBefore: 'b'.repeat(40) } });
const submitted = (taskId: string, status: HandoffStatus, summary: string, extra: { synthetic?: boolean; concerns?: string[] } = {}): EventBody => ({
  type: 'handoff.submitted',
  data: { taskId, handoff: handoffOf(status, summary, extra) },
});
const delivered = (taskId: string, status: HandoffStatus): EventBody => ({ type: 'handoff.delivered', data: { taskId, parentTaskId: 'sub', status } });
const ended = (status: string): EventBody => ({ type: 'agent.ended', data: { status, steps: 3, reason: 'handoff submitted' } });
const failed = (reason: string): EventBody => ({ type: 'agent.failed', data: { steps: 3, reason, lastToolCall: null } });
const waiting: EventBody = { type: 'agent.waiting', data: { step: 1, openChildren: 2 } };
const mergeChecked = (passed: boolean): EventBody => ({ type: 'merge.checked', data: { commit: 'a'.repeat(40), mainBefore: 'b'.repeat(40), passed, durationMs: 9 } });
const acceptance = (taskId: string, passed: boolean, skipped: string | null): EventBody => ({
  type: 'acceptance.checked',
  data: { taskId, claimed: 'done', commit: skipped === null ? 'a'.repeat(40) : null, passed, skipped, results: [] },
});

const STUCK = 'the agent stopped calling tools (3 turns in a row)';

/**
 * An old run, then the run under analysis: a root planner over a sub-planner and two workers of
 * its own; one worker crashed and its task was retried twice, one hung, one was claimed again
 * after the run was resumed. Times in milliseconds after T0.
 */
function scenario() {
  const log = createLog();
  log.add(0, 'system', runStarted, 'run-old');
  log.add(0, 'worker-old', agentStarted('worker', 'w-old'), 'run-old');
  log.add(0, 'worker-old', failed('an old crash'), 'run-old');

  log.add(0, 'system', runStarted);
  log.add(0, 'system', taskCreated('root', null));
  log.add(0, 'planner-root', agentStarted('root-planner', 'root'));
  log.add(100, 'planner-root', responded(1000, 100, 0.1));
  log.add(200, 'system', taskCreated('sub', 'root'));
  log.add(200, 'system', taskCreated('w3', 'root'));
  log.add(300, 'planner-sub', agentStarted('sub-planner', 'sub'));
  log.add(400, 'planner-sub', responded(500, 50, 0.05));
  log.add(450, 'planner-sub', waiting);
  log.add(500, 'system', taskCreated('w1', 'sub'));
  log.add(500, 'system', taskCreated('w2', 'sub'));
  log.add(600, 'planner-root', waiting);

  log.add(1000, 'worker-1', agentStarted('worker', 'w1'));
  log.add(1100, 'worker-1', responded(200, 20, 0.02));
  log.add(1100, 'worker-1', toolStarted('c1', 'run_command', { command: 'node --test' }));
  log.add(4100, 'worker-1', toolEnded('c1', 'run_command', true, 'exit code: 1\n\nnot ok 1 - adds\n# fail 1', 3000, 1_200));
  log.add(4200, 'worker-1', toolStarted('c2', 'run_command', { command: 'node --test' }));
  log.add(5700, 'worker-1', toolEnded('c2', 'run_command', true, 'exit code: 0\n\nok', 1500, 300.5));
  log.add(5800, 'worker-1', toolStarted('c3', 'run_command', { command: 'npm run lint' }));
  log.add(5900, 'worker-1', toolEnded('c3', 'run_command', false, 'error: could not run the command: no bash', 100));
  log.add(5900, 'worker-1', { type: 'context.compacted', data: { step: 2, model: 'sim', windowTokens: 8000, beforeTokens: 7000, afterTokens: 900, replaced: 6, kept: 2, summary: 's', usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 }, costUsd: 0.001, durationMs: 3 } });
  log.add(6000, 'worker-1', conflicted(['src/index.js', 'src/a.js']));
  log.add(6500, 'worker-1', conflicted(['src/index.js']));
  log.add(7000, 'worker-1', landed(['src/index.js']));
  log.add(7100, 'worker-1', submitted('w1', 'done', 'Built it'));
  log.add(7100, 'worker-1', ended('done'));

  log.add(8000, 'worker-2', agentStarted('worker', 'w2'));
  log.add(8100, 'worker-2', requested);
  log.add(28_100, 'worker-2', responded(300, 30, 0.03));
  for (const call of ['r1', 'r2', 'r3']) {
    log.add(28_200, 'worker-2', toolStarted(call, 'read_file', { path: 'src/index.js' }));
    log.add(28_200, 'worker-2', toolEnded(call, 'read_file', true, 'export {};'));
  }
  log.add(28_500, 'worker-2', submitted('w2', 'failed', `The worker ended without a handoff: ${STUCK}.`, { synthetic: true }));
  log.add(28_500, 'worker-2', failed(STUCK));
  log.add(28_600, 'system', delivered('w2', 'failed'));
  log.add(29_000, 'system', taskCreated('w2b', 'sub', 'w2'));
  log.add(29_100, 'worker-2b', agentStarted('worker', 'w2b'));
  log.add(29_200, 'worker-2b', responded(100, 10, 0.01));
  log.add(29_300, 'worker-2b', submitted('w2b', 'failed', 'The tests still fail', { concerns: ['src/index.js keeps conflicting'] }));
  log.add(29_300, 'worker-2b', ended('failed'));
  log.add(29_400, 'system', delivered('w2b', 'failed'));
  log.add(30_000, 'system', taskCreated('w2c', 'sub', 'w2b'));
  log.add(30_100, 'worker-2c', agentStarted('worker', 'w2c'));
  log.add(30_200, 'worker-2c', responded(100, 10, 0.01));
  log.add(31_000, 'worker-2c', landed(['src/b.js']));
  log.add(31_100, 'worker-2c', ended('done'));
  log.add(31_200, 'system', delivered('w2c', 'done'));

  log.add(40_000, 'system', claimed('w3', 1));
  log.add(40_000, 'worker-3', agentStarted('worker', 'w3'));
  for (const [index, [name, input]] of ([['read_file', { path: 'a' }], ['read_file', { path: 'a' }], ['list_dir', {}], ['read_file', { path: 'a' }]] as const).entries()) {
    log.add(40_100 + index * 100, 'worker-3', toolStarted(`d${index}`, name, input));
    log.add(40_100 + index * 100, 'worker-3', toolEnded(`d${index}`, name, true, 'fine'));
  }
  log.add(40_500, 'worker-3', toolStarted('e1', 'edit_file', { path: 'a' }));
  log.add(40_500, 'worker-3', toolEnded('e1', 'edit_file', false, 'error: the old text was not found'));
  log.add(50_000, 'system', { type: 'agent.hung', data: { taskId: 'w3', hungAgentId: 'worker-3', silentMs: 600_000, limitMs: 300_000 } });
  log.add(50_100, 'worker-3', failed('stopped: the run was cancelled'));

  log.add(50_500, 'system', taskCreated('w4', 'root'));
  log.add(51_000, 'system', claimed('w4', 1));
  log.add(51_000, 'worker-4', agentStarted('worker', 'w4'));
  log.add(51_100, 'worker-4', responded(50, 5, 0.005));
  log.add(60_600, 'planner-root', { type: 'message.received', data: { step: 2, fromTaskId: 'w2c', content: 'Handoff' } });
  log.add(60_700, 'planner-root', responded(400, 40, 0.04));
  log.add(60_800, 'planner-root', waiting);
  // colony was down from here until the resume: nobody's silence.
  log.add(200_000, 'system', { type: 'run.resumed', data: { resumes: 1, lastSeq: 1, released: ['w4'], repaired: 0, clearedLocks: [] } });
  log.add(200_000, 'system', claimed('w4', 2));
  log.add(200_100, 'worker-4', agentStarted('worker', 'w4'));
  log.add(200_200, 'worker-4', mergeChecked(false));
  log.add(200_400, 'worker-4', mergeChecked(true));
  log.add(200_500, 'worker-4', landed());
  log.add(200_600, 'worker-4', ended('done'));
  log.add(201_000, 'system', acceptance('w1', false, null));
  log.add(201_000, 'system', acceptance('w2', false, 'nothing landed'));
  log.add(202_000, 'system', { type: 'main.checked', data: { command: 'node --test', commit: 'c'.repeat(40), passed: true, exitCode: 0, timedOut: false, durationMs: 50, outputTail: 'ok' } });
  log.add(202_400, 'planner-sub', ended('done'));
  log.add(202_500, 'planner-root', ended('done'));
  log.add(202_600, 'system', { type: 'run.ended', data: { status: 'done', durationMs: 202_600 } });
  return log;
}

describe('the run analysis', () => {
  const log = scenario();
  let analysis: RunAnalysis;
  beforeAll(async () => {
    analysis = analyzeRun(await log.events());
  });

  it('follows the run started last and ignores the others', async () => {
    expect(analysis.runId).toBe('run-new');
    expect(analysis.crashes.map((crash) => crash.taskId)).not.toContain('w-old');
    expect(analyzeRun(await log.events(), 'run-old').crashes).toMatchObject([{ taskId: 'w-old', reason: 'an old crash' }]);
  });

  it('ranks the slowest commands and groups the failing ones by their text', () => {
    const { commands } = analysis;
    expect(commands).toMatchObject({ runs: 3, failures: 2, failingTotal: 2, cpuMs: 1_500.5, cpuCounted: 2 });
    expect(commands.slowest.map((run) => [run.command, run.durationMs, run.ok, run.taskId])).toEqual([
      ['node --test', 3000, false, 'w1'],
      ['node --test', 1500, true, 'w1'],
      ['npm run lint', 100, false, 'w1'],
    ]);
    expect(commands.failing).toMatchObject([
      { command: 'npm run lint', runs: 1, failures: 1, share: 1 },
      { command: 'node --test', runs: 2, failures: 1, share: 0.5 },
    ]);
    expect(commands.failing[1]?.sampleOutput).toMatch(/^exit code: 1\n[\s\S]*# fail 1$/);
    expect(commands.tools).toEqual([
      { tool: 'run_command', calls: 3, failures: 1 },
      { tool: 'edit_file', calls: 1, failures: 1 },
      { tool: 'read_file', calls: 6, failures: 0 },
      { tool: 'list_dir', calls: 1, failures: 0 },
    ]);
  });

  it('names hung agents and the longest silences, leaving out waiting and the time the run was down', () => {
    expect(analysis.stalls.hung).toEqual([{ agentId: 'worker-3', taskId: 'w3', silentMs: 600_000, limitMs: 300_000, at: T0 + 50_000 }]);
    const [longest, ...rest] = analysis.stalls.longestSilences;
    expect(longest).toEqual({ agentId: 'worker-2', role: 'worker', taskId: 'w2', silentMs: 20_000, from: T0 + 8100, after: 'model.requested', endedBy: 'model.responded' });
    expect(rest.map((silence) => silence.agentId)).toEqual(['worker-3', 'worker-1', 'worker-2c', 'planner-root']);
    expect(rest.every((silence) => silence.silentMs < 20_000)).toBe(true);
  });

  it('finds one agent calling the same tool with the same input three times in a row', () => {
    expect(analysis.loops).toEqual({
      total: 1,
      loops: [{ agentId: 'worker-2', taskId: 'w2', tool: 'read_file', input: '{"path":"src/index.js"}', repeats: 3, at: T0 + 28_200 }],
    });
  });

  it('ranks files by merge conflicts, counting those colony resolved itself apart', () => {
    expect(analysis.conflicts).toEqual({
      conflictedMerges: 2,
      autoResolvedMerges: 2,
      files: [
        { file: 'src/index.js', conflicted: 2, autoResolved: 1 },
        { file: 'src/a.js', conflicted: 1, autoResolved: 0 },
        { file: 'src/b.js', conflicted: 0, autoResolved: 1 },
      ],
    });
  });

  it('follows retry chains and tasks claimed again, with why each attempt failed', () => {
    expect(analysis.retries.total).toBe(2);
    expect(analysis.retries.tasks).toEqual([
      {
        taskId: 'w2',
        title: 'Title of w2',
        chain: ['w2', 'w2b', 'w2c'],
        attempts: 3,
        reasons: [
          { taskId: 'w2', reason: STUCK },
          { taskId: 'w2b', reason: 'failed: The tests still fail Concerns: src/index.js keeps conflicting' },
        ],
        outcome: 'done',
      },
      { taskId: 'w4', title: 'Title of w4', chain: ['w4'], attempts: 2, reasons: [], outcome: null },
    ]);
  });

  it('lists crashed tasks with the surest reason: a hang over the stop that followed it', () => {
    expect(analysis.crashes).toEqual([
      { taskId: 'w2', title: 'Title of w2', agentId: 'worker-2', role: 'worker', how: 'agent-failed', reason: STUCK, at: T0 + 28_500 },
      { taskId: 'w3', title: 'Title of w3', agentId: 'worker-3', role: 'worker', how: 'hung', reason: 'hung: recorded nothing for 600s (the limit is 300s)', at: T0 + 50_000 },
    ]);
  });

  it('adds cost up by task and by subtree, compaction summaries included', () => {
    const { cost } = analysis;
    expect(cost.costKnown).toBe(true);
    expect(cost.costUsd).toBeCloseTo(0.266, 6);
    expect(cost.tokens).toBe(3025);
    expect(cost.tasks.map((task) => [task.taskId, task.tokens])).toEqual([
      ['root', 1540],
      ['sub', 550],
      ['w2', 330],
      ['w1', 330],
      ['w2b', 110],
      ['w2c', 110],
      ['w4', 55],
      ['w3', 0],
    ]);
    expect(cost.subtrees).toMatchObject([
      { taskId: 'root', tasks: 8, tokens: 3025, costUsd: 0.266 },
      { taskId: 'sub', tasks: 5, tokens: 1430, costUsd: 0.121 },
    ]);
  });

  it('counts tokens by role', () => {
    expect(analysis.tokensByRole).toEqual({
      'root-planner': { agents: 1, inputTokens: 1400, outputTokens: 140, cachedInputTokens: 0, totalTokens: 1540, costUsd: 0.14 },
      'sub-planner': { agents: 1, inputTokens: 500, outputTokens: 50, cachedInputTokens: 0, totalTokens: 550, costUsd: 0.05 },
      worker: { agents: 6, inputTokens: 850, outputTokens: 85, cachedInputTokens: 0, totalTokens: 935, costUsd: 0.076 },
    });
  });

  it('measures the time from a task created to its first landing', () => {
    expect(analysis.timeToLand).toEqual({
      count: 3,
      medianMs: 6500,
      p90Ms: 150_000,
      maxMs: 150_000,
      slowest: [
        { taskId: 'w4', title: 'Title of w4', ms: 150_000 },
        { taskId: 'w1', title: 'Title of w1', ms: 6500 },
        { taskId: 'w2c', title: 'Title of w2c', ms: 1000 },
      ],
    });
  });

  it('counts how often main was red, leaving out acceptance checks that ran nothing', () => {
    expect(analysis.mainHealth).toEqual({
      main: { runs: 1, failed: 0, share: 0 },
      merges: { runs: 2, failed: 1, share: 0.5 },
      acceptance: { runs: 1, failed: 1, share: 1 },
      snapshots: { runs: 0, failed: 0, share: 0 },
      all: { runs: 4, failed: 2, share: 0.5 },
      lastMain: { commit: 'c'.repeat(40), passed: true, at: T0 + 202_000 },
      green: null,
    });
  });

  it('gives the same answer fed page by page, and ignores events it has folded already', async () => {
    const fold = createRunAnalysisFold();
    for (let afterSeq = 0; ; ) {
      const page = await log.store.read({ afterSeq, limit: 7 });
      if (page.length === 0) break;
      for (const event of page) fold.add(event);
      afterSeq = page.at(-1)?.seq ?? afterSeq;
    }
    for (const event of await log.events()) fold.add(event);
    expect(fold.result()).toEqual(analysis);
  });

  it('prints each section with aligned columns', () => {
    const text = formatRunAnalysis(analysis);
    for (const heading of ['Slowest commands (3 run, 2 failed, 1.5 s of CPU in the 2 counted):', 'Hung agents', 'Loops (the same tool call 3+ times in a row): 1', 'Merge conflicts: 2 conflicted merge(s)', 'Retried tasks: 2', 'Crashed tasks: 2', 'Costliest subtrees', 'Tokens by role:', 'Time from task created to landed (3 tasks): median 6.5s, p90 2m 30s', 'How often main was red:']) {
      expect(text).toContain(heading);
    }
    const lines = text.split('\n');
    const roles = lines.slice(lines.indexOf('Tokens by role:') + 1, lines.indexOf('Tokens by role:') + 5);
    expect(roles[0]).toMatch(/^ {2}ROLE +AGENTS +INPUT +OUTPUT +TOTAL +COST$/);
    // The last column lines up on the right, so every line of the table is as long as its heading.
    expect(new Set(roles.map((line) => line.length)).size).toBe(1);
    expect(text).toMatch(/ {2}w2 +worker-2 +agent-failed +Title of w2: the agent stopped calling tools/);
  });
});

describe("colony's refusals", () => {
  it('counts each kind by its opening, a refused republish apart from a publish beyond the bound and tests apart from notes, and nothing for a refusal that is not the protocol', async () => {
    const log = createLog();
    const fold = createRunAnalysisFold({ runId: 'run-new' });
    fold.add(await log.stored(0, 'system', runStarted));
    const refusals: readonly (readonly [string, string])[] = [
      ['merge_to_main', 'error: Not merged: your change adds NOTES.md, which look like notes'],
      ['merge_to_main', 'error: Not merged: your change adds TASK_SUMMARY.md, which look like notes'],
      ['merge_to_main', 'error: Not merged (tests outside your task): your change edits src/trim.test.js'],
      ['create_task', 'error: Not published now: at most 8 tasks'],
      ['create_task', "error: Not published: this brief is task task-1's, which ended failed"],
      ['merge_to_main', 'error: merge conflict: main changed the same lines as your change.'],
    ];
    for (const [index, [name, output]] of refusals.entries()) {
      fold.add(await log.stored(index + 1, 'agent-1', toolStarted(`c${index}`, name, {})));
      fold.add(await log.stored(index + 1, 'agent-1', toolEnded(`c${index}`, name, false, output)));
    }
    expect(fold.result().commands.catches).toEqual([
      { opening: 'Not merged:', calls: 2 },
      { opening: 'Not merged (tests outside your task):', calls: 1 },
      { opening: 'Not published now:', calls: 1 },
      { opening: 'Not published:', calls: 1 },
    ]);
  });
});

describe('loops and silences', () => {
  it('takes three calls in a row to make a loop, not two', async () => {
    const log = createLog();
    const fold = createRunAnalysisFold({ runId: 'run-new' });
    const add = async (ms: number, body: EventBody) => fold.add(await log.stored(ms, 'worker-1', body));
    fold.add(await log.stored(0, 'system', runStarted));
    await add(0, agentStarted('worker', 'w1'));
    await add(1, toolStarted('a', 'run_command', { command: 'node --test' }));
    await add(2, toolStarted('b', 'run_command', { command: 'node --test' }));
    expect(fold.result().loops).toEqual({ total: 0, loops: [] });
    await add(3, toolStarted('c', 'run_command', { command: 'node --test' }));
    expect(fold.result().loops).toMatchObject({ total: 1, loops: [{ tool: 'run_command', repeats: 3, input: '{"command":"node --test"}' }] });
    // A different input ends the run of repeats; the loop stays counted once.
    await add(4, toolStarted('d', 'run_command', { command: 'node --test src/a.test.js' }));
    await add(5, toolStarted('e', 'run_command', { command: 'node --test' }));
    await add(6, toolStarted('f', 'run_command', { command: 'node --test' }));
    expect(fold.result().loops).toMatchObject({ total: 1, loops: [{ repeats: 3 }] });
  });

  it('tells long inputs apart by all of their text, and reports only their start', async () => {
    const log = createLog();
    log.add(0, 'system', runStarted);
    log.add(0, 'worker-1', agentStarted('worker', 'w1'));
    const content = 'x'.repeat(5000);
    for (const [index, ending] of ['a', 'b', 'b', 'b'].entries()) log.add(index + 1, 'worker-1', toolStarted(`w${index}`, 'write_file', { path: 'a.js', content: `${content}${ending}` }));
    const { loops } = analyzeRun(await log.events());
    expect(loops).toMatchObject({ total: 1, loops: [{ tool: 'write_file', repeats: 3, at: T0 + 2 }] });
    expect(loops.loops[0]?.input.length).toBeLessThanOrEqual(300);
  });

  it('keeps the last output of the most-failing commands among hundreds of different ones', async () => {
    const log = createLog();
    log.add(0, 'system', runStarted);
    log.add(0, 'worker-1', agentStarted('worker', 'w1'));
    const run = (callId: string, command: string, output: string) => {
      log.add(1, 'worker-1', toolStarted(callId, 'run_command', { command }));
      log.add(1, 'worker-1', toolEnded(callId, 'run_command', true, output));
    };
    run('first', 'npm test', 'exit code: 1\n\nthe first failure');
    run('second', 'npm test', 'exit code: 2\n\nthe second failure');
    for (let index = 0; index < 300; index += 1) run(`c${index}`, `grep -n needle${index} src`, 'exit code: 1\n\n');
    const { commands } = analyzeRun(await log.events());
    expect(commands).toMatchObject({ runs: 302, failures: 302, failingTotal: 301 });
    expect(commands.failing[0]).toEqual({ command: 'npm test', runs: 2, failures: 2, share: 1, sampleOutput: 'exit code: 2\nthe second failure' });
  });

  it('measures an agent still silent at the end of the log up to the last event of the run', async () => {
    const log = createLog();
    log.add(0, 'system', runStarted);
    log.add(0, 'worker-1', agentStarted('worker', 'w1'));
    log.add(1000, 'worker-1', requested);
    log.add(2000, 'worker-2', agentStarted('worker', 'w2'));
    log.add(9000, 'worker-2', ended('done'));
    expect(analyzeRun(await log.events()).stalls.longestSilences[0]).toEqual({
      agentId: 'worker-1',
      role: 'worker',
      taskId: 'w1',
      silentMs: 8000,
      from: T0 + 1000,
      after: 'model.requested',
      endedBy: null,
    });
  });

  it('counts no crash for an agent the run stopped, whose task went back to be resumed', async () => {
    const log = createLog();
    log.add(0, 'system', runStarted);
    log.add(1, 'system', taskCreated('w-1', null));
    log.add(2, 'system', claimed('w-1', 1));
    log.add(3, 'worker-1', agentStarted('worker', 'w-1'));
    log.add(4, 'worker-1', failed('stopped: the run was cancelled'));
    log.add(5, 'system', { type: 'task.released', data: { taskId: 'w-1', reason: 'the run was stopped' } });
    expect(analyzeRun(await log.events()).crashes).toEqual([]);
    log.add(6, 'system', claimed('w-1', 2));
    log.add(7, 'worker-1', failed('the agent stopped calling tools (3 turns in a row)'));
    expect(analyzeRun(await log.events()).crashes).toMatchObject([{ taskId: 'w-1', reason: 'the agent stopped calling tools (3 turns in a row)' }]);
  });

  it('answers an empty log with an empty analysis', () => {
    const empty = analyzeRun([]);
    expect(empty).toMatchObject({ runId: null, events: 0, crashes: [], retries: { total: 0 }, timeToLand: { count: 0, medianMs: null } });
    expect(formatRunAnalysis(empty)).toContain('Run (none): 0 events analysed');
  });
});
