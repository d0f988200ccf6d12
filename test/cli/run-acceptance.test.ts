import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 120_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js', 'src/numbers/clamp.js']);
});

afterEach(() => {
  repo.cleanup();
});

async function events(types: string): Promise<ColonyEvent[]> {
  const listed = await runCli(['events', '--repo', repo.dir, '--json', '--type', types]);
  return listed.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

describeRuns('colony run with acceptance checks', () => {
  it('catches workers that merge failing work and claim done; the planner retries them and the run ends green', async () => {
    // Every first attempt is wrong, and every worker whose first attempt fails lies about it.
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?seed=3&bug=1&lie=1', '--workers', '2']);
    expect(result.code, result.stderr).toBe(0);
    const { tasks } = await expectGreenRun(repo);

    const checks = (await events('acceptance.checked')).flatMap((event) => (event.type === 'acceptance.checked' ? [event.data] : []));
    const falseClaims = checks.filter((check) => check.claimed === 'done' && check.skipped === null && !check.passed);
    expect(falseClaims.length).toBeGreaterThan(0);
    let lies = 0;
    for (const claim of falseClaims) {
      expect(claim.results[0]).toMatchObject({ command: 'node scripts/test.js', exitCode: 1, timedOut: false });
      // What the worker said and what the checks found, side by side in the handoff that was delivered.
      const task = tasks.find((each) => each.id === claim.taskId);
      expect(task?.handoff).toMatchObject({ status: 'done', acceptance: { commit: claim.commit, passed: false } });
      // A liar's made-up evidence, or an honest worker whose own tests passed while another's lie broke main.
      if (task?.handoff?.evidence.includes('exit code: 0') === true) lies += 1;
      else expect(task?.handoff?.concerns.join('\n')).toContain('Tests outside this task fail on main');
      // The planner did not take the claim: the same module was published again as a retry.
      const retry = tasks.find((each) => each.retryOf === claim.taskId);
      expect(retry?.acceptance).toEqual(['node scripts/test.js']);
      expect(retry?.body).toContain('acceptance: claimed done, checks failed at');
    }
    expect(lies).toBeGreaterThan(0);
    // Every task carried the project's tests as its acceptance, and every module ended checked and passing.
    expect(tasks.every((task) => task.acceptance.length === 1 && task.acceptance[0] === 'node scripts/test.js')).toBe(true);
    expect(checks.filter((check) => check.passed).length).toBeGreaterThan(0);
    const received = await events('message.received');
    expect(received.some((event) => event.type === 'message.received' && /\nacceptance: claimed done, checks failed at [0-9a-f]{12}\n/.test(event.data.content))).toBe(true);

    // A person sees the false claims in the run's status and its summary.
    const status = JSON.parse((await runCli(['status', '--repo', repo.dir, '--json'])).stdout) as { acceptance: { falseClaims: number; failed: number } };
    expect(status.acceptance.falseClaims).toBe(falseClaims.length);
    expect((await runCli(['status', '--repo', repo.dir])).stdout).toMatch(/\nAcceptance checks: \d+ passed, \d+ failed \(\d+ false claims?: done, checks failed\)/);
    expect(result.stdout).toMatch(/\nacceptance checks: \d+ passed, \d+ failed \(\d+ false claims?: done, checks failed\)/);
    expect(result.stderr).toMatch(/acceptance checks of task \S+: claimed done, checks failed on [0-9a-f]{12}: `node scripts\/test\.js`/);
  }, RUN_TIMEOUT_MS);
});
