import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';
import { readLoggedEvents, runCliUntilLanded, startColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/** A run here takes a minute or two on the sim, several on a loaded machine. */
const RUN_TIMEOUT_MS = 600_000;
const MODEL = 'sim?seed=4&latency=20..60';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

describeRuns("the state directory, out of the checkout's way", () => {
  it('keeps a run going to the end through `git clean -fdx` in the checkout', async () => {
    const stateDir = defaultStateDir(repo.dir);
    expect(stateDir).toBe(join(repo.dir, '.git', 'colony'));
    const run = startColonyProcess(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', MODEL, '--workers', '3', '--json'], repo.dir);
    await waitForLoggedEvent(stateDir, (event) => event.type === 'merge.landed', RUN_TIMEOUT_MS / 2);
    // What a user tidying their checkout does: everything untracked and ignored goes, with
    // whatever colony kept in the checkout (an earlier version's .colony went this way).
    writeFileSync(join(repo.dir, 'scratch.txt'), 'notes\n');
    repo.git('clean', '-fdx');
    expect(existsSync(join(repo.dir, 'scratch.txt'))).toBe(false);

    const ended = await run.ended;
    expect(ended.code, ended.stderr).toBe(0);
    expect(JSON.parse(ended.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    await expectGreenRun(repo);
    expect(existsSync(join(repo.dir, '.colony'))).toBe(false);
    expect(readLoggedEvents(stateDir).filter((event) => event.type === 'agent.failed')).toEqual([]);
    expect(repo.git('status', '--porcelain')).toBe('');
  }, RUN_TIMEOUT_MS);

  it("finds and resumes an unfinished run in the checkout's .colony, where an earlier version kept it", async () => {
    const legacy = join(repo.dir, '.colony');
    const stopped = await runCliUntilLanded(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--state', legacy, '--model', MODEL, '--workers', '3', '--quiet'], legacy);
    expect(stopped.code).toBe(1);
    const runId = readLoggedEvents(legacy).find((event) => event.type === 'run.started')?.runId ?? '';
    expect(defaultStateDir(repo.dir)).toBe(legacy);

    const shown = await runCli(['status', '--repo', repo.dir]);
    expect(shown.stdout).toMatch(new RegExp(`^Run ${runId}: stopped`));
    expect(shown.stdout).toContain('Continue it with: colony resume');
    // Reading a run says nothing of where its state is; starting a session does, once.
    expect(shown.stderr).toBe('');
    const refused = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', MODEL]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`holds an unfinished run, ${runId}`);

    const resumed = await runCli(['resume', '--repo', repo.dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ runId, status: 'done', check: { passed: true } });
    expect(resumed.stderr.split(`using the state directory an earlier version made in the checkout, ${legacy}`)).toHaveLength(2);
    await expectGreenRun(repo);
    expect(existsSync(join(repo.dir, '.git', 'colony'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');
  }, RUN_TIMEOUT_MS);
});
