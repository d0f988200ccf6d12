import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';
import { parseScenario } from '../../src/sim/scenario/scenario.js';
import { readLoggedEvents } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/** Each run here takes 15 to 40 seconds on the sim; a loaded machine takes longer. */
const TEST_TIMEOUT_MS = 180_000;
/** Slow enough that the user's commits fall between landings. */
const MODEL = 'sim?seed=2&latency=150..300';

const run = promisify(execFile);

let repo: ExampleRepository;
let stateDir: string;
let modules: string[];

beforeEach(() => {
  repo = createExampleRepository('text-kit');
  // The user's own git, with their name, as `colony land`'s merge uses.
  repo.git('config', 'user.name', 'The User');
  repo.git('config', 'user.email', 'user@example.invalid');
  stateDir = defaultStateDir(repo.dir);
  const parsed = parseScenario(readFileSync(join(repo.dir, 'GOAL.md'), 'utf8'));
  if (!parsed.ok) throw new Error(parsed.error);
  modules = parsed.scenario.modules.map((module) => module.path);
});

afterEach(() => {
  repo.cleanup();
});

/**
 * git as the user types it in their checkout while the run goes. git's index lock may be held
 * for a moment by colony bringing the checkout up to a landing: the user would type it again.
 */
async function userGit(...args: string[]): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await run('git', args, { cwd: repo.dir })).stdout;
    } catch (error) {
      if (attempt >= 20 || !/index\.lock/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function userCommits(file: string): Promise<string> {
  writeFileSync(join(repo.dir, file), `${file} of the user's\n`);
  await userGit('add', file);
  await userGit('commit', '-q', '-m', `The user's ${file}`);
  return (await userGit('rev-parse', 'HEAD')).trim();
}

/** Waits until `count` landings are in the run's log. */
async function landings(count: number): Promise<void> {
  const landed = () => readLoggedEvents(stateDir).filter((event) => event.type === 'merge.landed').length;
  await expect.poll(landed, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(count);
}

function filesOn(branch: string): string[] {
  return repo.git('ls-tree', '-r', '--name-only', branch).trim().split('\n');
}

describeRuns('where a run lands', () => {
  it(
    'lands on a branch of its own while the user commits to main, and colony land brings the work onto main',
    async () => {
      const start = repo.git('rev-parse', 'main').trim();
      const running = runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', MODEL, '--workers', '2', '--no-tui']);
      await landings(1);
      const first = await userCommits('NOTES.md');
      await landings(3);
      const second = await userCommits('TODO.md');
      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      // Said before it started, and in the summary: where the work is, how to review it and bring it in.
      expect(result.stderr).toContain(`landing on colony/text-kit (made from main at ${start.slice(0, 12)}) in ${repo.dir}; main is not touched`);
      expect(result.stdout).toContain('The work is on colony/text-kit');
      expect(result.stdout).toContain('log --oneline main..colony/text-kit');
      expect(result.stdout).toContain(`colony land --repo ${repo.dir}`);

      // main holds exactly the user's commits, and the checkout is as they left it.
      expect(repo.git('rev-list', 'main').trim().split('\n')).toEqual([second, first, start]);
      expect(repo.git('status', '--porcelain')).toBe('');
      expect(filesOn('main').filter((file) => modules.includes(file))).toEqual([]);
      const { status } = await expectGreenRun(repo);
      expect(status.run).toMatchObject({ trunk: 'colony/text-kit', checkedOut: 'main' });
      expect(repo.git('branch', '--format=%(refname:short)').trim().split('\n')).toEqual(['colony/text-kit', 'colony/text-kit-green', 'main']);

      const landed = await runCli(['land', '--repo', repo.dir]);
      expect(landed.code, landed.stderr).toBe(0);
      expect(landed.stdout).toMatch(/^main merged \(a merge commit, since both had moved\) to [0-9a-f]{12}: \d+ commits of run run-\w+ from colony\/text-kit\./);
      for (const module of modules) expect(filesOn('main')).toContain(module);
      expect(filesOn('main')).toEqual(expect.arrayContaining(['NOTES.md', 'TODO.md']));
      expect(repo.git('status', '--porcelain')).toBe('');
      for (const module of modules) expect(existsSync(join(repo.dir, module))).toBe(true);
      const again = await runCli(['land', '--repo', repo.dir]);
      expect(again.stdout).toBe('main already holds every commit of colony/text-kit: nothing to land.\n');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'with --trunk main, keeps the checkout in step so a commit of the user\'s loses no landed module',
    async () => {
      const running = runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main', '--model', MODEL, '--workers', '2', '--quiet', '--json']);
      await landings(2);
      const notes = await userCommits('NOTES.md');
      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', checkoutProblem: null, trunkProblem: null });
      for (const module of modules) expect(filesOn('main')).toContain(module);
      expect(filesOn('main')).toContain('NOTES.md');
      expect(repo.git('merge-base', '--is-ancestor', notes, 'main')).toBe('');
      expect(repo.git('status', '--porcelain')).toBe('');
      // Where the user's commit came between a landing and colony bringing their index up to it,
      // it undid that landing's files: colony named it and put them back on top.
      for (const event of readLoggedEvents(stateDir)) {
        if (event.type === 'trunk.rewritten') expect(event.data).toMatchObject({ kind: 'reverted', commit: notes, restored: expect.stringMatching(/^[0-9a-f]{40}$/) });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'with --trunk main, reports a reset that drops landed commits as a trunk rewrite naming the commit',
    async () => {
      const running = runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main', '--model', MODEL, '--workers', '2', '--no-tui']);
      // Two of the six modules landed: four landings are still to come after the reset.
      await landings(2);
      await userGit('reset', '-q', '--hard', 'HEAD~2');
      const resetTo = (await userGit('rev-parse', 'HEAD')).trim();
      const result = await running;
      const rewrites = readLoggedEvents(stateDir).filter((event) => event.type === 'trunk.rewritten');
      expect(rewrites.map((event) => event.data), result.stderr).toEqual([
        expect.objectContaining({ kind: 'moved', branch: 'main', commit: resetTo, action: 'reset: moving to HEAD~2', dropped: expect.arrayContaining([expect.any(String)]) }),
      ]);
      expect(result.stderr).toContain(`trunk rewritten: main was moved from `);
      expect(result.stderr).toContain(` to ${resetTo.slice(0, 12)} (reset: moving to HEAD~2) by someone other than colony`);
      expect(result.stdout).toContain(`trunk rewritten: main was moved from `);
      // Every module is back on main, or the run says exactly what to do to bring back what is not.
      const missing = modules.filter((module) => !filesOn('main').includes(module));
      if (missing.length === 0) {
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).not.toContain('landed work is missing');
      } else {
        expect(result.stderr).toMatch(/landed work is missing from main: \d+ landed commits? (is|are) no longer on main \(.*\) after it was moved by someone else\. Bring them back with `git cherry-pick [0-9a-f ]+` on main/);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
