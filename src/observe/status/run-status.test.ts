import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody, RecordedEvent } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { HandoffStatus } from '../../events/handoff.js';
import { runSettingsFixture } from '../../events/testing/run-settings-fixture.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { handoffOf } from '../../store/testing/task-store-fixtures.js';
import type { InboxMessage, TaskRecord, TaskStatus } from '../../store/tasks/task-store.js';
import { foldRunStatus } from './run-status.js';
import { formatRunStatus, salvagedLines } from './format-run-status.js';
import { createRunStatusFold } from './run-status-fold.js';
import { type RunStatus } from './types.js';

const T0 = Date.UTC(2026, 10, 29, 14, 0, 0);

/** An event log in a real (in-memory) store, with a clock the test moves. */
function createLog() {
  let clock = T0;
  const store = createMemoryEventStore({ now: () => clock });
  return {
    at(ms: number): void {
      clock = T0 + ms;
    },
    append(runId: string, agentId: string, body: EventBody): RecordedEvent {
      return store.append({ ...body, runId, agentId });
    },
    events: (): Promise<ColonyEvent[]> => store.read(),
  };
}

const runStarted = (title: string): EventBody => ({ type: 'run.started', data: { mode: 'run', repo: '/srv/parser', model: 'sim', title } });
const runEnded = (status: string, durationMs: number): EventBody => ({ type: 'run.ended', data: { status, durationMs } });

function agentStarted(role: AgentRole, taskId: string, title: string, parentAgentId?: string | null): EventBody {
  return {
    type: 'agent.started',
    data: { role, taskId, title, model: 'sim', systemPrompt: 'prompt', task: 'brief', tools: ['read_file'], parentAgentId },
  };
}

function modelResponded(
  step: number,
  inputTokens: number,
  outputTokens: number,
  costUsd: number | null,
  cache: { cachedInputTokens: number; cacheWriteTokens?: number } = { cachedInputTokens: 0 },
): EventBody {
  return {
    type: 'model.responded',
    data: {
      step,
      text: '',
      toolCalls: [{ id: `call-${step}`, name: 'read_file', input: '{"path":"a"}' }],
      finishReason: 'tool-calls',
      usage: { inputTokens, outputTokens, ...cache },
      costUsd,
      durationMs: 10,
      attempts: 1,
    },
  };
}

const modelRequested = (step: number): EventBody => ({ type: 'model.requested', data: { step, model: 'sim', messages: 2, chars: 100 } });
const toolStarted = (step: number): EventBody => ({ type: 'tool.started', data: { step, callId: `call-${step}`, name: 'read_file', input: '{}' } });
const waiting = (step: number): EventBody => ({ type: 'agent.waiting', data: { step, openChildren: 1 } });
const received = (step: number): EventBody => ({ type: 'message.received', data: { step, fromTaskId: 'task-a', content: 'Handoff' } });
const ended = (status: string, steps: number): EventBody => ({ type: 'agent.ended', data: { status, steps, reason: 'handoff submitted' } });
const failed = (steps: number, reason: string): EventBody => ({ type: 'agent.failed', data: { steps, reason, lastToolCall: null } });
const landed = (commit: string): EventBody => ({
  type: 'merge.landed',
  data: { commit, mainBefore: 'b'.repeat(40), attempts: 1, files: ['src/a.ts'], durationMs: 5 },
});

function task(runId: string, id: string, parentTaskId: string | null, status: TaskStatus): TaskRecord {
  return {
    id,
    runId,
    parentTaskId,
    createdBy: parentTaskId === null ? null : 'planner-root',
    kind: 'worker',
    title: id,
    body: 'brief',
    scope: null,
    retryOf: null,
    paths: [],
    acceptance: [],
    status,
    attempt: status === 'open' ? 0 : 1,
    leaseHolder: null,
    leaseExpiresAt: null,
    createdAt: T0,
    closedAt: null,
    handoff: null,
  };
}

function delivered(runId: string, seq: number, fromTaskId: string, status: HandoffStatus): InboxMessage {
  const handoff = handoffOf(status, 'did it');
  return { seq, runId, recipientTaskId: 'task-root', fromTaskId, handoff, text: null, createdAt: T0, sender: null };
}

/**
 * Two runs in one log. The second, still going: a root planner waiting on its children, a
 * sub-planner woken by a handoff, one worker done, one failed, one failed then ended partial,
 * one still running.
 */
function twoRuns() {
  const log = createLog();
  log.append('run-old', 'system', runStarted('Old goal'));
  log.append('run-old', 'planner-old', agentStarted('root-planner', 'task-old', 'Old goal'));
  log.append('run-old', 'planner-old', modelResponded(1, 5000, 500, 0.5));
  log.append('run-old', 'planner-old', landed('c'.repeat(40)));
  log.append('run-old', 'system', runEnded('done', 60_000));

  log.at(100_000);
  log.append('run-new', 'system', {
    type: 'run.started',
    data: { mode: 'run', repo: '/srv/parser', model: 'sim', title: 'Build the parser', trunk: { branch: 'colony/build-the-parser', made: true, commit: 'a'.repeat(40), checkedOut: 'main' } },
  });
  log.append('run-new', 'planner-root', agentStarted('root-planner', 'task-root', 'Build the parser', null));
  log.append('run-new', 'planner-root', modelRequested(1));
  log.append('run-new', 'planner-root', modelResponded(1, 100, 10, 0.01));
  log.append('run-new', 'planner-root', toolStarted(1));
  log.append('run-new', 'planner-root', toolStarted(1));
  log.append('run-new', 'planner-root', waiting(1));
  log.append('run-new', 'planner-sub', agentStarted('sub-planner', 'task-sub', 'Lexer', 'planner-root'));
  log.append('run-new', 'planner-sub', modelResponded(1, 200, 20, null));
  log.append('run-new', 'worker-a', agentStarted('worker', 'task-a', 'Tokenise strings', 'planner-sub'));
  log.append('run-new', 'worker-a', modelResponded(1, 300, 30, 0.02));
  log.append('run-new', 'worker-a', toolStarted(1));
  log.append('run-new', 'worker-a', landed('a'.repeat(40)));
  log.at(101_000);
  log.append('run-new', 'worker-a', ended('done', 1));
  log.append('run-new', 'planner-sub', waiting(1));
  log.append('run-new', 'planner-sub', received(2));
  log.append('run-new', 'worker-b', agentStarted('worker', 'task-b', 'Parse numbers', 'planner-root'));
  log.append('run-new', 'worker-b', modelResponded(1, 400, 40, 0.03));
  log.append('run-new', 'worker-b', modelResponded(2, 500, 50, 0.04));
  log.append('run-new', 'worker-b', failed(2, 'the step budget ran out (2 model calls)'));
  log.append('run-new', 'worker-c', agentStarted('worker', 'task-c', 'Comments', 'planner-sub'));
  log.append('run-new', 'worker-c', failed(0, 'the model call failed'));
  log.append('run-new', 'worker-c', ended('partial', 0));
  log.at(105_000);
  log.append('run-new', 'worker-d', agentStarted('worker', 'task-d', 'Printer', 'planner-root'));

  const tasks = [
    task('run-old', 'task-old', null, 'done'),
    task('run-old', 'task-old-child', 'task-old', 'done'),
    task('run-new', 'task-root', null, 'running'),
    task('run-new', 'task-sub', 'task-root', 'running'),
    task('run-new', 'task-a', 'task-sub', 'done'),
    task('run-new', 'task-b', 'task-root', 'failed'),
    task('run-new', 'task-c', 'task-sub', 'partial'),
    task('run-new', 'task-d', 'task-root', 'running'),
    task('run-new', 'task-e', 'task-root', 'open'),
    task('run-new', 'task-f', 'task-root', 'blocked'),
  ];
  const deliveredHandoffs = [
    delivered('run-old', 1, 'task-old-child', 'done'),
    delivered('run-new', 2, 'task-a', 'done'),
    delivered('run-new', 3, 'task-b', 'failed'),
    delivered('run-new', 4, 'task-c', 'partial'),
  ];
  return { log, tasks, deliveredHandoffs };
}

function statusOf(input: Parameters<typeof foldRunStatus>[0]): RunStatus {
  const status = foldRunStatus(input);
  if (status === null) throw new Error('expected a run');
  return status;
}

describe('foldRunStatus', () => {
  it('reports the run started last, still running, with its wall time up to now', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const status = statusOf({ events: await log.events(), tasks, deliveredHandoffs, now: T0 + 130_000 });
    expect(status.run).toEqual({
      id: 'run-new',
      state: 'running',
      mode: 'run',
      repo: '/srv/parser',
      model: 'sim',
      title: 'Build the parser',
      trunk: 'colony/build-the-parser',
      checkedOut: 'main',
      startedAt: T0 + 100_000,
      resumes: 0,
      endedAt: null,
      durationMs: 30_000,
      lastEventAt: T0 + 105_000,
    });
    // Without a clock the wall time runs to the last event.
    expect(statusOf({ events: await log.events(), tasks, deliveredHandoffs }).run.durationMs).toBe(5_000);
  });

  it('counts summaries near the context window as model spend, and keeps each agent\'s latest scratchpad', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Build the parser'));
    log.append('run-1', 'planner-a', agentStarted('root-planner', 'task-root', 'Build the parser', null));
    log.append('run-1', 'planner-a', modelResponded(1, 1_000, 100, 0.5));
    log.append('run-1', 'planner-a', { type: 'scratchpad.written', data: { content: 'plan: one' } });
    log.append('run-1', 'planner-a', { type: 'scratchpad.written', data: { content: 'plan: two' } });
    log.append('run-1', 'planner-a', {
      type: 'context.compacted',
      data: {
        step: 2,
        model: 'sim',
        windowTokens: 8_000,
        beforeTokens: 7_000,
        afterTokens: 1_500,
        replaced: 40,
        kept: 6,
        summary: 'Summary of the conversation so far ...',
        usage: { inputTokens: 6_000, outputTokens: 400, cachedInputTokens: 0 },
        costUsd: 0.25,
        durationMs: 30,
      },
    });
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status.compaction).toEqual({ count: 1, tokens: 6_400 });
    expect(status.tokens.total).toBe(7_500);
    expect(status.costUsd).toBe(0.75);
    expect(status.modelCalls).toBe(1);
    expect(status.agents[0]).toEqual(expect.objectContaining({ scratchpad: 'plan: two', compactions: 1, tokens: 7_500 }));
    expect(formatRunStatus(status)).toContain('Compactions: 1 (6,400 tokens, 85.3% of all)');
  });

  it('shows a stopped run running again once resumed, and its stopped agents taken up again', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Build the parser'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'Tokenise strings', null));
    log.append('run-1', 'worker-a', failed(1, 'stopped: the run was cancelled'));
    log.append('run-1', 'system', runEnded('stopped', 5_000));
    const stopped = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(stopped.run).toMatchObject({ state: 'stopped', resumes: 0 });
    expect(stopped.agents).toMatchObject([{ id: 'worker-a', state: 'failed' }]);

    log.append('run-1', 'system', { type: 'run.resumed', data: { resumes: 1, lastSeq: 4, released: ['task-a'], repaired: 0, clearedLocks: [] } });
    log.append('run-1', 'worker-a', { type: 'agent.restored', data: { attempt: 2, step: 1, interrupted: 0, notStarted: 0 } });
    const resumed = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(resumed.run).toMatchObject({ state: 'running', resumes: 1, endedAt: null });
    expect(resumed.agents).toMatchObject([{ id: 'worker-a', state: 'running', endedAt: null }]);
  });

  it('counts the tasks of the run without the root planner’s own, and its handoffs and commits', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const status = statusOf({ events: await log.events(), tasks, deliveredHandoffs });
    expect(status.tasks).toEqual({ total: 7, byStatus: { open: 1, running: 2, done: 1, partial: 1, blocked: 1, failed: 1 } });
    expect(status.handoffs).toEqual({ delivered: 3 });
    expect(status.commits).toEqual({ landed: 1 });
    expect(status.modelCalls).toBe(5);
    expect(status.toolCalls).toBe(3);
  });

  it('shows the spend against each limit a budget set, and which scopes were warned and used up', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    const unbudgeted = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(unbudgeted.budget).toBeNull();
    expect(formatRunStatus(unbudgeted)).not.toContain('Budget');
    log.append('run-1', 'system', { type: 'budget.set', data: { tokens: 10_000, usd: null, maxHours: 0.5, deadline: T0 + 1_800_000 } });
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'A'));
    log.append('run-1', 'worker-a', modelResponded(1, 7_000, 1_500, 0.2));
    const figures = { taskId: 'task-root', scope: 'run' as const, measure: 'tokens' as const, spent: 8_500, limit: 10_000 };
    log.append('run-1', 'system', { type: 'budget.warned', data: figures });
    log.append('run-1', 'system', { type: 'budget.exhausted', data: { ...figures, reserved: 8_500, agents: 1 } });
    log.append('run-1', 'system', { type: 'budget.exhausted', data: { ...figures, taskId: 'task-slice', scope: 'subtree', limit: 4_000, reserved: 0, agents: 0 } });
    log.at(600_000);
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [], now: T0 + 900_000 });
    expect(status.budget).toEqual({
      tokens: { limit: 10_000, spent: 8_500 },
      usd: null,
      time: { limit: 1_800_000, spent: 900_000 },
      warned: [figures],
      exhausted: [figures, { ...figures, taskId: 'task-slice', scope: 'subtree', limit: 4_000 }],
    });
    const text = formatRunStatus(status);
    expect(text).toContain('Budget: 8,500 tokens of 10,000 tokens (85%), used up\nTime: 15 minutes of 30 minutes (50%)\nSubtrees that used up their share: task-slice\n');
  });

  it('counts tasks by their latest acceptance verdict, and a done claim whose checks failed as a false claim, unless they failed only as main already did', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    const none = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(none.acceptance).toEqual({ passed: 0, failed: 0, notRun: 0, falseClaims: 0 });
    expect(formatRunStatus(none)).not.toContain('Acceptance');
    const commit = 'c'.repeat(40);
    const result = { command: 'node --test', exitCode: 1, timedOut: false, durationMs: 900, output: '✖ pad' };
    const checked = (taskId: string, claimed: 'done' | 'partial', passed: boolean, skipped: string | null = null): EventBody => ({
      type: 'acceptance.checked',
      data: { taskId, claimed, commit: skipped === null ? commit : null, passed, skipped, results: skipped === null ? [{ ...result, exitCode: passed ? 0 : 1 }] : [] },
    });
    log.append('run-1', 'worker-a', checked('task-a', 'done', false));
    log.append('run-1', 'worker-b', checked('task-b', 'partial', false));
    log.append('run-1', 'worker-c', checked('task-c', 'done', true));
    log.append('run-1', 'worker-d', checked('task-d', 'done', false, 'nothing landed'));
    log.append('run-1', 'worker-e', checked('task-e', 'done', false));
    // Checked again after a restart: the latest verdict counts, once.
    log.append('run-1', 'worker-e', checked('task-e', 'done', true));
    // Failed only with what main's green check showed before the merge: the worker said so, as it was told to.
    log.append('run-1', 'worker-f', {
      type: 'acceptance.checked',
      data: { taskId: 'task-f', claimed: 'done', commit, passed: false, skipped: null, results: [{ ...result, alreadyFailing: ['✖ pad'], newFailures: [] }] },
    });
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status.acceptance).toEqual({ passed: 2, failed: 3, notRun: 1, falseClaims: 1 });
    expect(formatRunStatus(status)).toContain('Commits landed: 0\nAcceptance checks: 2 passed, 3 failed (1 false claim: done, checks failed), 1 not run\n');
  });

  it('says how the run confined its commands, and what its network proxy allowed and refused', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).sandbox).toBeNull();
    log.append('run-1', 'system', { type: 'sandbox.opened', data: { method: 'bubblewrap', summary: 'confined', network: 'only registry.npmjs.org' } });
    log.append('run-1', 'system', { type: 'network.requested', data: { host: 'registry.npmjs.org', port: 443, allowed: true } });
    log.append('run-1', 'system', { type: 'network.requested', data: { host: 'example.com', port: 443, allowed: false } });
    log.append('run-1', 'system', { type: 'network.requested', data: { host: 'example.com', port: 80, allowed: false } });
    // The setup's install has a proxy of its own: its requests are not the agents'.
    log.append('run-1', 'system', { type: 'network.requested', data: { host: 'registry.npmjs.org', port: 443, allowed: true, setup: true } });
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status.sandbox).toEqual({ method: 'bubblewrap', network: 'only registry.npmjs.org', networkAllowed: 1, networkRefused: 2 });
    expect(formatRunStatus(status)).toContain('Sandbox: bubblewrap, network only registry.npmjs.org (1 request(s) allowed, 2 refused)\n');

    const unconfined = createLog();
    unconfined.append('run-1', 'system', runStarted('Goal'));
    unconfined.append('run-1', 'system', { type: 'sandbox.opened', data: { method: 'none', summary: 'NOT confined', network: 'all' } });
    expect(formatRunStatus(statusOf({ events: await unconfined.events(), tasks: [], deliveredHandoffs: [] }))).toContain('Sandbox: none: commands ran unconfined, as asked\n');
  });

  it("follows the run's setup: installing since it started, then ready, failed or skipped with why", async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).setup).toBeNull();
    const installing = { command: 'npm ci', registry: 'https://registry.npmjs.org/', packages: 204 };
    log.append('run-1', 'system', { type: 'dependencies.installing', data: { ...installing, elapsedMs: 0 } });
    log.append('run-1', 'system', { type: 'dependencies.installing', data: { ...installing, elapsedMs: 15_000 } });
    const running = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(running.setup).toMatchObject({ state: 'installing', command: 'npm ci', registry: 'https://registry.npmjs.org/' });
    // Since the first event: the later one says it still runs, not that it started again.
    expect(running.setup?.startedAt).toBe((await log.events())[1]?.ts);
    expect(formatRunStatus(running)).toMatch(/\nSetup: npm ci from https:\/\/registry\.npmjs\.org\/, running for \d+ s\n/);
    log.append('run-1', 'system', { type: 'dependencies.prepared', data: { key: 'k'.repeat(64), layerDir: '/l', reused: false, bytes: 3 * 2 ** 20, durationMs: 41_500, command: 'npm ci' } });
    const ready = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(formatRunStatus(ready)).toContain('\nSetup: npm ci from https://registry.npmjs.org/, installed 3.0 MB in 41.5 s\n');
    // A workspace that could not take the layer does not undo the run's setup.
    log.append('run-1', 'worker-a', { type: 'dependencies.skipped', data: { reason: 'the workspace already has node_modules' } });
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).setup?.state).toBe('ready');

    const failing = createLog();
    failing.append('run-1', 'system', runStarted('Goal'));
    failing.append('run-1', 'system', { type: 'dependencies.installing', data: { ...installing, elapsedMs: 0 } });
    failing.append('run-1', 'system', { type: 'dependencies.failed', data: { error: 'npm error 404 Not Found - GET https://registry.npmjs.org/nope', fix: 'fix package.json', durationMs: 2_100 } });
    expect(formatRunStatus(statusOf({ events: await failing.events(), tasks: [], deliveredHandoffs: [] }))).toContain('\nSetup FAILED in 2.1 s: npm ci from https://registry.npmjs.org/: npm error 404 Not Found - GET https://registry.npmjs.org/nope\n');
  });

  it('says what share of the input the prompt cache gave', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'A'));
    log.append('run-1', 'worker-a', modelResponded(1, 4000, 100, 0.01, { cachedInputTokens: 0, cacheWriteTokens: 3900 }));
    log.append('run-1', 'worker-a', modelResponded(2, 4500, 100, 0.01, { cachedInputTokens: 3900, cacheWriteTokens: 500 }));
    log.append('run-1', 'worker-a', modelResponded(3, 5000, 100, 0.01, { cachedInputTokens: 4400 }));
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status.tokens).toEqual({ input: 13_500, output: 300, cachedInput: 8300, cacheWrite: 4400, total: 13_800 });
    expect(formatRunStatus(status)).toContain('Tokens: 13,800 (13,500 input, 300 output)\nPrompt cache: 61.5% of input read from it (8,300 tokens), 4,400 written\n');
  });

  it('sums tokens and cost, and says the cost is a lower bound when a call had no price', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const status = statusOf({ events: await log.events(), tasks, deliveredHandoffs });
    expect(status.tokens).toEqual({ input: 1500, output: 150, cachedInput: 0, cacheWrite: 0, total: 1650 });
    expect(formatRunStatus(status)).not.toContain('Prompt cache');
    expect(status.costUsd).toBe(0.1);
    expect(status.costKnown).toBe(false);

    const old = statusOf({ events: await log.events(), tasks, deliveredHandoffs, runId: 'run-old' });
    expect(old.tokens.total).toBe(5500);
    expect(old.costUsd).toBe(0.5);
    expect(old.costKnown).toBe(true);
  });

  it('lists the agents in start order with their role, parent, state, steps, tokens and cost', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const agents = statusOf({ events: await log.events(), tasks, deliveredHandoffs }).agents;
    expect(agents.map((agent) => [agent.id, agent.role, agent.parentId, agent.state, agent.steps, agent.tokens, agent.costUsd])).toEqual([
      ['planner-root', 'root-planner', null, 'waiting', 1, 110, 0.01],
      ['planner-sub', 'sub-planner', 'planner-root', 'running', 1, 220, 0],
      ['worker-a', 'worker', 'planner-sub', 'done', 1, 330, 0.02],
      ['worker-b', 'worker', 'planner-root', 'failed', 2, 990, 0.07],
      ['worker-c', 'worker', 'planner-sub', 'partial', 0, 0, 0],
      ['worker-d', 'worker', 'planner-root', 'running', 0, 0, 0],
    ]);
    const workerB = agents.find((agent) => agent.id === 'worker-b');
    expect(workerB).toMatchObject({
      taskId: 'task-b',
      title: 'Parse numbers',
      startedAt: T0 + 101_000,
      endedAt: T0 + 101_000,
      reason: 'the step budget ran out (2 model calls)',
    });
    expect(agents.find((agent) => agent.id === 'worker-d')).toMatchObject({ endedAt: null, reason: null });
  });

  it('reports the given run, and a finished one with its own status and duration', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const old = statusOf({ events: await log.events(), tasks, deliveredHandoffs, runId: 'run-old', now: T0 + 999_999 });
    expect(old.run).toMatchObject({ id: 'run-old', state: 'done', title: 'Old goal', endedAt: T0, durationMs: 60_000 });
    expect(old.tasks.total).toBe(1);
    expect(old.handoffs.delivered).toBe(1);
    expect(old.commits.landed).toBe(1);
    expect(old.agents.map((agent) => agent.id)).toEqual(['planner-old']);
  });

  it('is null without a run, or for a run the log does not hold', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    expect(foldRunStatus({ events: [], tasks, deliveredHandoffs })).toBeNull();
    expect(foldRunStatus({ events: await log.events(), tasks, deliveredHandoffs, runId: 'run-missing' })).toBeNull();
  });

  it('is plain data that survives JSON', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const status = statusOf({ events: await log.events(), tasks, deliveredHandoffs });
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it('wakes a waiting planner at its next model call', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'planner-root', agentStarted('root-planner', 'task-root', 'Goal'));
    log.append('run-1', 'planner-root', waiting(3));
    const before = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    log.append('run-1', 'planner-root', modelRequested(4));
    const after = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect([before.agents[0]?.state, after.agents[0]?.state]).toEqual(['waiting', 'running']);
  });

  it('shows a parked agent as parked until it resumes, and lists it among those at work', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'A'));
    log.append('run-1', 'worker-a', { type: 'agent.parked', data: { step: 2, kind: 'rate-limit', message: '429', attempts: 6, waitMs: 10_000 } });
    const parked = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    log.append('run-1', 'worker-a', { type: 'agent.unparked', data: { step: 2, parkedMs: 10_000 } });
    const resumed = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect([parked.agents[0]?.state, resumed.agents[0]?.state]).toEqual(['parked', 'running']);
    expect(formatRunStatus(parked)).toContain('worker worker-a  parked  0 steps  A');
  });

  it('shows a parked agent rebuilt after a restart as running again', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'A'));
    log.append('run-1', 'worker-a', { type: 'agent.parked', data: { step: 2, kind: 'rate-limit', message: '429', attempts: 6, waitMs: 10_000 } });
    log.append('run-1', 'worker-a', { type: 'agent.restored', data: { attempt: 2, step: 1, interrupted: 0, notStarted: 0 } });
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).agents[0]?.state).toBe('running');
  });

  it('shows an ended status it does not know as failed', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'A'));
    log.append('run-1', 'worker-a', ended('vanished', 3));
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).agents[0]?.state).toBe('failed');
  });

  it('records pulled andons until they are released', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'planner-root', { type: 'andon.changed', data: { taskId: 'task-root', paused: true, reason: 'red' } });
    log.append('run-1', 'planner-sub', { type: 'andon.changed', data: { taskId: 'task-sub', paused: true, reason: 'red' } });
    log.append('run-1', 'planner-root', { type: 'andon.changed', data: { taskId: 'task-root', paused: false, reason: 'green' } });
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).pausedTaskIds).toEqual(['task-sub']);
  });

  it("shows the user's hold on the whole run apart from planners' andons, until the user releases it", async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.at(1_000);
    log.append('run-1', 'system', { type: 'andon.changed', data: { taskId: null, paused: true, reason: 'reviewing main', by: 'user', andonSeq: 1 } });
    log.append('run-1', 'planner-root', { type: 'andon.changed', data: { taskId: 'task-root', paused: true, reason: 'red' } });
    log.append('run-1', 'planner-root', { type: 'andon.changed', data: { taskId: 'task-root', paused: false, reason: 'green' } });
    const held = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(held.userAndon).toEqual({ reason: 'reviewing main', since: T0 + 1_000 });
    expect(held.pausedTaskIds).toEqual([]);
    expect(formatRunStatus(held)).toContain('Spawning paused by you: reviewing main — release with colony andon --release');
    log.append('run-1', 'system', { type: 'andon.changed', data: { taskId: null, paused: false, reason: 'fine', by: 'user', andonSeq: 2 } });
    const released = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(released.userAndon).toBeNull();
    expect(formatRunStatus(released)).not.toContain('Spawning paused');
  });
});

describe('the worker limit', () => {
  const settings = runSettingsFixture();

  it("is the run's --workers until the user changes it, then the latest change, and is shown as one line", async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    expect(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }).workers).toBeNull();
    log.append('run-1', 'system', { type: 'run.configured', data: { settings } });
    const configured = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(configured.workers).toBe(4);
    expect(formatRunStatus(configured)).toContain('\nWorkers: up to 4 at once\n');
    log.append('run-1', 'system', { type: 'workers.changed', data: { workers: 1, previous: 4, by: 'user', requestSeq: 1 } });
    log.append('run-1', 'system', { type: 'agent.stop-requested', data: { taskId: 'task-a', stoppedAgentId: 'worker-a', reason: 'wrong way', requestSeq: 2 } });
    log.append('run-1', 'system', { type: 'workers.changed', data: { workers: 12, previous: 1, by: 'user', requestSeq: 3 } });
    const changed = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(changed.workers).toBe(12);
    expect(formatRunStatus(changed).match(/^Workers: .*$/gm)).toEqual(['Workers: up to 12 at once']);
  });
});

describe('createRunStatusFold', () => {
  it('fed one event at a time, ends where the whole fold does, and ignores events it already has', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const events = await log.events();
    const fold = createRunStatusFold();
    for (const event of events) {
      fold.add(event);
      fold.add(event);
    }
    expect(fold.runId).toBe('run-new');
    expect(fold.snapshot({ tasks, deliveredHandoffs })).toEqual(foldRunStatus({ events, tasks, deliveredHandoffs }));
  });

  it('follows the next run when one starts, and a fixed run only', async () => {
    const { log } = twoRuns();
    const following = createRunStatusFold();
    const fixed = createRunStatusFold({ runId: 'run-old' });
    const seen: (string | null)[] = [];
    for (const event of await log.events()) {
      following.add(event);
      fixed.add(event);
      seen.push(following.snapshot({ tasks: [], deliveredHandoffs: [] })?.run.id ?? null);
    }
    expect(seen.at(0)).toBe('run-old');
    expect(seen.at(-1)).toBe('run-new');
    expect(following.snapshot({ tasks: [], deliveredHandoffs: [] })?.agents.some((agent) => agent.id === 'planner-old')).toBe(false);
    expect(fixed.snapshot({ tasks: [], deliveredHandoffs: [] })?.agents.map((agent) => agent.id)).toEqual(['planner-old']);
  });

  it('has nothing to show before the run started', () => {
    const fold = createRunStatusFold({ runId: 'run-1' });
    expect(fold.snapshot({ tasks: [], deliveredHandoffs: [] })).toBeNull();
  });
});

describe('formatRunStatus', () => {
  it('writes the header, the counts and the tree indented under each parent', async () => {
    const { log, tasks, deliveredHandoffs } = twoRuns();
    const text = formatRunStatus(statusOf({ events: await log.events(), tasks, deliveredHandoffs, now: T0 + 100_000 + 3_725_000 }));
    expect(text).toBe(
      [
        'Run run-new: running, wall time 1h 02m 05s',
        '  Build the parser',
        '  colony run on /srv/parser with sim, started 2026-11-29T14:01:40Z',
        '  landing on colony/build-the-parser',
        'Tasks: 7 (1 open, 2 running, 1 done, 1 partial, 1 blocked, 1 failed)',
        'Handoffs delivered: 3',
        'Commits landed: 1',
        'Tokens: 1,650 (1,500 input, 150 output)',
        'Cost: $0.1000 (some model calls had no price, so at least this)',
        'Model calls: 5, tool calls: 3',
        '',
        'Agents:',
        '  root-planner planner-root  waiting  1 step  Build the parser',
        '    sub-planner planner-sub  running  1 step  Lexer',
        '      2 workers finished: 1 done, 1 partial',
        '    worker worker-b  failed  2 steps  Parse numbers  (the step budget ran out (2 model calls))',
        '    worker worker-d  running  0 steps  Printer',
        '    1 worker finished: 1 failed',
        '',
      ].join('\n'),
    );
  });

  it('keeps a finished tree of hundreds of agents to a few lines', async () => {
    const log = createLog();
    log.append('run-big', 'system', runStarted('Big goal'));
    log.append('run-big', 'planner-root', agentStarted('root-planner', 'task-root', 'Big goal'));
    for (let planner = 0; planner < 3; planner += 1) {
      const plannerId = `planner-${planner}`;
      log.append('run-big', plannerId, agentStarted('sub-planner', `task-p${planner}`, `Slice ${planner}`, 'planner-root'));
      for (let worker = 0; worker < 100; worker += 1) {
        const workerId = `worker-${planner}-${worker}`;
        log.append('run-big', workerId, agentStarted('worker', `task-${planner}-${worker}`, `Piece ${worker}`, plannerId));
        // Slice 0 has two failed workers; slice 2 has twelve, more than are listed.
        const fails = (planner === 0 && worker < 2) || (planner === 2 && worker < 12);
        log.append('run-big', workerId, fails ? failed(4, 'died') : ended('done', 5));
      }
      log.append('run-big', plannerId, ended('done', 9));
    }
    log.append('run-big', 'planner-root', ended('done', 20));
    log.append('run-big', 'system', runEnded('done', 7_200_000));

    const text = formatRunStatus(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }));
    const tree = text.slice(text.indexOf('Agents:\n') + 'Agents:\n'.length).trimEnd().split('\n');
    expect(text.startsWith('Run run-big: done, wall time 2h 00m 00s\n')).toBe(true);
    expect(tree.filter((line) => line.includes('sub-planner')).length).toBe(3);
    expect(tree.filter((line) => /^ {6}worker worker-\d+-\d+ {2}failed {2}4 steps {2}Piece \d+ {2}\(died\)$/.test(line)).length).toBe(12);
    expect(tree).toContain('      100 workers finished: 98 done, 2 failed');
    expect(tree).toContain('      100 workers finished: 100 done');
    expect(tree).toContain('      100 workers finished: 88 done, 12 failed (2 failed not listed)');
    expect(tree.length).toBe(1 + 3 * 2 + 2 + 10);
  });

  it("shows why a worker failed from its own handoff's summary, and a planner's finish summary in the status", async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'planner-root', agentStarted('root-planner', 'task-root', 'Goal'));
    log.append('run-1', 'worker-a', agentStarted('worker', 'task-a', 'Build a', 'planner-root'));
    log.append('run-1', 'worker-a', {
      type: 'handoff.submitted',
      data: { taskId: 'task-a', handoff: handoffOf('failed', 'The tests kept failing on the empty case.') },
    });
    log.append('run-1', 'worker-a', ended('failed', 7));
    log.append('run-1', 'planner-root', { type: 'planner.finished', data: { taskId: 'task-root', status: 'partial', summary: 'a is not built' } });
    const status = statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status.agents.map((agent) => agent.summary)).toEqual(['a is not built', 'The tests kept failing on the empty case.']);
    expect(formatRunStatus(status)).toContain('    worker worker-a  failed  7 steps  Build a  (The tests kept failing on the empty case.)\n');
  });

  it('places an agent whose parent never started at the top, after the root planner', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'worker-orphan', agentStarted('worker', 'task-x', 'Orphan', 'planner-gone'));
    log.append('run-1', 'planner-root', agentStarted('root-planner', 'task-root', 'Goal'));
    const text = formatRunStatus(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }));
    expect(text.endsWith('Agents:\n  root-planner planner-root  running  0 steps  Goal\n  worker worker-orphan  running  0 steps  Orphan\n')).toBe(true);
  });

  it('still shows agents whose parent links go round in a circle', async () => {
    const log = createLog();
    log.append('run-1', 'system', runStarted('Goal'));
    log.append('run-1', 'planner-a', agentStarted('sub-planner', 'task-a', 'A', 'planner-b'));
    log.append('run-1', 'planner-b', agentStarted('sub-planner', 'task-b', 'B', 'planner-a'));
    const text = formatRunStatus(statusOf({ events: await log.events(), tasks: [], deliveredHandoffs: [] }));
    expect(text.endsWith('Agents:\n  sub-planner planner-a  running  0 steps  A\n    sub-planner planner-b  running  0 steps  B\n')).toBe(true);
  });

  it('lists salvaged work by its refs, five at most, with how to look at it', () => {
    expect(salvagedLines([])).toEqual([]);
    const work = Array.from({ length: 7 }, (_, n) => ({ agentId: `worker-${n}`, ref: `refs/colony/salvaged/worker-${n}`, sideRef: n === 1 ? `refs/colony/salvaged/worker-${n}-salvaged` : null, files: n }));
    expect(salvagedLines(work)).toEqual([
      'Salvaged work, not on main: 7 workspaces (look with git log refs/colony/salvaged/worker-0)',
      '  refs/colony/salvaged/worker-0 (worker-0)',
      '  refs/colony/salvaged/worker-1 and refs/colony/salvaged/worker-1-salvaged (worker-1, 1 uncommitted file committed)',
      '  refs/colony/salvaged/worker-2 (worker-2, 2 uncommitted files committed)',
      '  refs/colony/salvaged/worker-3 (worker-3, 3 uncommitted files committed)',
      '  refs/colony/salvaged/worker-4 (worker-4, 4 uncommitted files committed)',
      '  and 2 more: colony events --type workspace.salvaged',
    ]);
  });
});

describe('a run with worker hosts', () => {
  it("names each agent's host, lists the hosts that joined and says why one left", async () => {
    const log = createLog();
    log.append('run-h', 'system', runStarted('Build on three machines'));
    log.append('run-h', 'system', { type: 'task.claimed', data: { taskId: 'task-own', kind: 'worker', attempt: 1, holder: 'runner-abc' } });
    log.append('run-h', 'worker-own', agentStarted('worker', 'task-own', 'Work of the run process'));
    log.at(1_000);
    log.append('run-h', 'system', { type: 'host.joined', data: { host: 'build-2', workers: 8, origin: 'https://git.internal/p.git', pid: 41 } });
    log.append('run-h', 'system', { type: 'host.joined', data: { host: 'build-3', workers: 8, origin: 'https://git.internal/p.git', pid: 42 } });
    log.append('run-h', 'system', { type: 'task.claimed', data: { taskId: 'task-far', kind: 'worker', attempt: 1, holder: 'build-2/runner-xyz' } });
    log.append('run-h', 'worker-far', agentStarted('worker', 'task-far', 'Work of a host'));
    log.at(2_000);
    log.append('run-h', 'system', { type: 'host.left', data: { host: 'build-3', reason: "the run's process went away", released: 1 } });
    log.append('run-h', 'system', { type: 'host.joined', data: { host: 'build-3', workers: 8, origin: 'https://git.internal/p.git', pid: 43 } });
    log.append('run-h', 'system', { type: 'host.left', data: { host: 'build-3', reason: 'the host was stopped', released: 1 } });
    const status = foldRunStatus({ events: await log.events(), tasks: [], deliveredHandoffs: [] });
    expect(status?.agents.map((agent) => [agent.id, agent.host])).toEqual([
      ['worker-own', null],
      ['worker-far', 'build-2'],
    ]);
    expect(status?.hosts.map((host) => [host.name, host.state, host.reason, host.released])).toEqual([
      ['build-2', 'working', null, 0],
      ['build-3', 'left', 'the host was stopped', 2],
    ]);
    const text = formatRunStatus(status as RunStatus);
    expect(text).toContain('Hosts: 1 working, 1 left');
    expect(text).toMatch(/build-3: left at .*: the host was stopped \(2 task\(s\) released\)/);
    expect(text).toContain('worker worker-far on build-2  running');
  });
});
