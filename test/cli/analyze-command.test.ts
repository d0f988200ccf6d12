import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { parseScenario } from '../../src/sim/scenario/scenario.js';
import type { RunAnalysis } from '../../src/observe/analysis/types.js';
import { openSqliteEventStore } from '../../src/store/sqlite/sqlite-event-store.js';
import { runColonyProcess } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { status } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/** The run takes about ten seconds alone; a loaded machine gets room. */
const RUN_TIMEOUT_MS = 120_000;

/**
 * Wrong first attempts and workers that die mid-task. With seed 1 the sim abandons the first
 * attempts at case.js, initials.js and range.js, so the log holds crashes and the retries that
 * followed them. The crash rolls hash each task's brief, so first attempts crash however the
 * run's timing falls; a retry's brief tells of earlier attempts, so whether a retry crashes too
 * may vary.
 */
const MODEL = 'sim?seed=1&bug=0.3&crash=0.05';

let repo: ExampleRepository;
let analysis: RunAnalysis;
let events: ColonyEvent[];

beforeAll(async () => {
  repo = createExampleRepository('toolbox');
  const run = await runColonyProcess(['run', 'GOAL.md', '--repo', '.', '--model', MODEL, '--workers', '4', '--quiet'], repo.dir);
  // With crashes injected the run may end done or, when a module's retries crash too, failed
  // (exit 1); either way it ended, and its log is what the analysis reads.
  expect([0, 1], run.stderr).toContain(run.code);
  expect(run.stdout).toMatch(/^run run-\w+: (done|partial|failed|blocked) in /m);
  const analyzed = await runCli(['analyze', '--repo', repo.dir, '--json']);
  expect(analyzed.code, analyzed.stderr).toBe(0);
  analysis = JSON.parse(analyzed.stdout) as RunAnalysis;
  const listed = await runCli(['events', '--repo', repo.dir, '--json', '--type', 'agent.started,agent.failed,tool.ended,handoff.delivered,merge.landed,run.ended']);
  events = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as ColonyEvent);
}, RUN_TIMEOUT_MS);

afterAll(() => {
  repo.cleanup();
});

describeRuns('colony analyze', () => {
  it('names the crashed tasks exactly as the log recorded their agents failing, with the reasons', () => {
    const taskOf = new Map(events.flatMap((event) => (event.type === 'agent.started' ? [[event.agentId, event.data.taskId] as const] : [])));
    const failures = events.flatMap((event) => (event.type === 'agent.failed' ? [{ taskId: taskOf.get(event.agentId), reason: event.data.reason }] : []));
    expect(failures.length).toBeGreaterThan(0);
    expect(analysis.crashes.map((crash) => crash.taskId).sort()).toEqual([...new Set(failures.map((failure) => failure.taskId))].sort());
    for (const crash of analysis.crashes) {
      expect(crash.how).toBe('agent-failed');
      expect(failures).toContainEqual({ taskId: crash.taskId, reason: crash.reason });
    }
  });

  it('counts every crashed task among the retried ones, with the crash among the reasons', () => {
    const outcomes = new Map(events.flatMap((event) => (event.type === 'handoff.delivered' ? [[event.data.taskId, event.data.status] as const] : [])));
    const chains = new Map(analysis.retries.tasks.flatMap((retried) => retried.chain.map((taskId) => [taskId, retried] as const)));
    for (const crash of analysis.crashes) {
      const retried = chains.get(crash.taskId);
      expect(retried, `task ${crash.taskId} crashed but is not among the retried`).toBeDefined();
      expect(retried?.reasons).toContainEqual({ taskId: crash.taskId, reason: crash.reason });
      expect(retried?.chain.length).toBeGreaterThan(1);
      expect(retried?.outcome).toBe(outcomes.get(retried?.chain.at(-1) ?? ''));
    }
  });

  it('names the index every module is re-exported from as the file merges collided on most', () => {
    const parsed = parseScenario(repo.git('show', 'main:GOAL.md'));
    if (!parsed.ok) throw new Error(parsed.error);
    const [hottest] = analysis.conflicts.files;
    expect(hottest?.file).toBe(parsed.scenario.project.index);
    expect((hottest?.conflicted ?? 0) + (hottest?.autoResolved ?? 0)).toBeGreaterThan(1);
  });

  it('counts the commands the workers ran, failures included, and the same tokens as colony status', async () => {
    const commandsEnded = events.filter((event) => event.type === 'tool.ended' && event.data.name === 'run_command');
    expect(analysis.commands.runs).toBe(commandsEnded.length);
    // The buggy first attempts fail their tests before the fix.
    expect(analysis.commands.failing.map((failing) => failing.command)).toContain('node scripts/test.js');
    const found = await status(repo);
    expect(analysis.cost.tokens).toBe(found.tokens.total);
    const byRole = Object.values(analysis.tokensByRole).reduce((sum, role) => sum + role.totalTokens, 0);
    expect(byRole).toBe(found.tokens.total);
    // Every task whose agent landed work, once; all twelve modules' when the run ended done (a
    // failed run may have given a module up after its retries crashed too).
    const taskOf = new Map(events.flatMap((event) => (event.type === 'agent.started' ? [[event.agentId, event.data.taskId] as const] : [])));
    const landedTasks = new Set(events.flatMap((event) => (event.type === 'merge.landed' ? [taskOf.get(event.agentId)] : [])));
    expect(analysis.timeToLand.count).toBe(landedTasks.size);
    const ended = events.find((event) => event.type === 'run.ended');
    expect(analysis.timeToLand.count).toBeGreaterThanOrEqual(ended?.type === 'run.ended' && ended.data.status === 'done' ? 12 : 1);
    // The release snapshot is the run's one check of main, and a run ends done only when it passed.
    expect(analysis.mainHealth.main.runs).toBe(1);
    if (ended?.type === 'run.ended' && ended.data.status === 'done') expect(analysis.mainHealth.main).toEqual({ runs: 1, failed: 0, share: 0 });
  });

  it('prints the same analysis as readable sections', async () => {
    const text = await runCli(['analyze', '--repo', repo.dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Crashed tasks: ${analysis.crashes.length}`);
    expect(text.stdout).toMatch(/CONFLICTED +AUTO-RESOLVED +FILE\n +\d+ +\d+ +src\/index\.js/);
  });

  it('says what to pass when there is no log, no run, or not the run asked for', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'colony-analyze-'));
    try {
      const noLog = await runCli(['analyze', '--state', empty]);
      expect(noLog.code).toBe(2);
      expect(noLog.stderr).toContain(`there is no colony event log at ${join(empty, 'colony.db')}`);
      expect(noLog.stderr).toContain('--repo');

      await openSqliteEventStore(join(empty, 'colony.db')).close();
      const noRun = await runCli(['analyze', '--state', empty, '--json']);
      expect(noRun.code).toBe(2);
      expect(noRun.stdout).toBe('');
      expect(noRun.stderr).toContain('there is no run in');
      expect(noRun.stderr).toContain('colony run');

      const unknown = await runCli(['analyze', '--repo', repo.dir, '--run', 'run-nope']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('there is no run run-nope in');
      expect(unknown.stderr).toContain('Leave out --run');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
