import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, projectTestsPass, runCli, unmountUnder, type ExampleRepository } from '../testing/example-repository.js';
import { chaosProblems } from '../testing/chaos-checks.js';
import { readLoggedEvents, runCliUntilLanded } from '../testing/colony-process.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const RUN_TIMEOUT_MS = 300_000;
const MODEL = 'sim?seed=4&latency=20..60';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

/** Starts `colony run` in this process and stops it (as Ctrl-C does) once `landings` merges have landed. */
function runAndStop(landings: number, flags: readonly string[] = []): Promise<{ code: number; stdout: string }> {
  return runCliUntilLanded(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', MODEL, '--workers', '3', '--quiet', ...flags], defaultStateDir(repo.dir), landings);
}

function events(): ColonyEvent[] {
  return readLoggedEvents(defaultStateDir(repo.dir));
}

describeRuns('colony resume', () => {
  it('says there is nothing to resume, with exit 2, where no run was recorded', async () => {
    const result = await runCli(['resume', '--repo', repo.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('there is no run to resume');
    expect(result.stderr).toContain('colony run GOAL.md');
  });

  it('continues a stopped run to green with the same agents; `run` meanwhile refuses and points to resume or --new', async () => {
    const stopped = await runAndStop(2);
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).toContain('colony resume');
    const before = events();
    const runId = before.find((event) => event.type === 'run.started')?.runId ?? '';
    expect(before.at(-1)).toMatchObject({ type: 'run.ended', data: { status: 'stopped' } });
    // A stopped worker keeps its workspace, uncommitted work and all, for the resumed run.
    const kept = before.filter((event) => event.type === 'workspace.created').map((event) => (event.type === 'workspace.created' ? event.data.path : ''));
    expect(kept.some((path) => existsSync(path))).toBe(true);

    const shown = await runCli(['status', '--repo', repo.dir]);
    expect(shown.stdout).toMatch(/^Run \S+: stopped, wall time/);
    expect(shown.stdout).toContain('Continue it with: colony resume');

    const refused = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', MODEL]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`holds an unfinished run, ${runId}`);
    expect(refused.stderr).toContain('colony resume');
    expect(refused.stderr).toContain('--new');

    const resumed = await runCli(['resume', '--repo', repo.dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const outcome = JSON.parse(resumed.stdout) as { durationMs: number; summary: { run: { durationMs: number } } };
    expect(outcome).toMatchObject({ runId, status: 'done', check: { passed: true } });
    // One wall time, from the run's first start: the summary's is the one status shows.
    expect(outcome.durationMs).toBe(outcome.summary.run.durationMs);
    await expectGreenRun(repo);
    expect(await chaosProblems(repo.dir, defaultStateDir(repo.dir), runId)).toEqual([]);

    const after = events().filter((event) => event.runId === runId && event.seq > (before.at(-1)?.seq ?? 0));
    expect(after[0]).toMatchObject({ type: 'run.resumed', data: { resumes: 1 } });
    // Every task the stop left open went back to the agent that had it: no second agent.started for it.
    const startedBefore = new Set(before.filter((event) => event.type === 'agent.started').map((event) => event.agentId));
    const restored = after.filter((event) => event.type === 'agent.restored').map((event) => event.agentId);
    expect(restored.length).toBeGreaterThan(0);
    expect(restored.every((agentId) => startedBefore.has(agentId))).toBe(true);
    const startedTwice = after.filter((event) => event.type === 'agent.started' && startedBefore.has(event.agentId));
    expect(startedTwice).toEqual([]);
    // Nothing left to resume now.
    const again = await runCli(['resume', '--repo', repo.dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('its last run ended');
  }, RUN_TIMEOUT_MS);

  it('gives a worker whose workspace is gone a fresh one and tells it so', async () => {
    // Worktrees: a deleted one is gone for good (an overlay's work survives in its upper layer
    // and is mounted again).
    const stopped = await runAndStop(1, ['--workspaces', 'worktree']);
    expect(stopped.code).toBe(1);
    const before = events();
    const runId = before.find((event) => event.type === 'run.started')?.runId ?? '';
    // Take every kept workspace away, as a person cleaning up might.
    const workspaces = join(defaultStateDir(repo.dir), 'workspaces');
    unmountUnder(workspaces);
    const gone = readdirSync(workspaces).filter((name) => name.startsWith('worker-'));
    expect(gone.length).toBeGreaterThan(0);
    for (const name of gone) rmSync(join(workspaces, name), { recursive: true, force: true });

    const resumed = await runCli(['resume', '--repo', repo.dir, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    await expectGreenRun(repo);
    const after = events().filter((event) => event.runId === runId && event.seq > (before.at(-1)?.seq ?? 0));
    const told = after.filter((event) => event.type === 'agent.nudged' && event.data.message.includes('your workspace could not be taken up again'));
    expect(told.length).toBeGreaterThan(0);
    const fresh = after.filter((event) => event.type === 'workspace.created' && told.some((nudge) => nudge.agentId === event.agentId));
    expect(fresh.length).toBe(told.length);
  }, RUN_TIMEOUT_MS);

  it('starts over with --new, recording the unfinished run as abandoned', async () => {
    // Both runs land on main, the branch checked out, so the new one builds on what the old one landed.
    const stopped = await runAndStop(1, ['--trunk', 'main']);
    expect(stopped.code).toBe(1);
    const oldRun = events().find((event) => event.type === 'run.started')?.runId ?? '';
    const fresh = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main', '--model', MODEL, '--new', '--quiet']);
    expect(fresh.code, fresh.stderr).toBe(0);
    const all = events();
    expect(all.filter((event) => event.runId === oldRun && event.type === 'run.ended').map((event) => (event.type === 'run.ended' ? event.data.status : ''))).toEqual(['stopped', 'abandoned']);
    const newRun = all.filter((event) => event.type === 'run.started').at(-1)?.runId ?? '';
    expect(newRun).not.toBe(oldRun);
    // The new run builds what the old one had not landed; together main holds the whole goal.
    expect(await chaosProblems(repo.dir, defaultStateDir(repo.dir), newRun)).toEqual([]);
    expect(projectTestsPass(repo.dir)).toBe(true);
  }, RUN_TIMEOUT_MS);
});
