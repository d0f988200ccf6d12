import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { hasNoteName } from '../../src/workspace/merge/note-files.js';
import type { TaskRecord } from '../../src/store/tasks/task-store.js';

/** A whole run of the small example takes tens of seconds, more on a loaded machine. */
const RUN_TIMEOUT_MS = 300_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

/** The count `colony analyze` gives for the refusals opening `opening`, or 0 when it lists none. */
function refused(analysis: string, opening: string): number {
  const row = analysis.split('\n').find((line) => line.trimEnd().endsWith(` ${opening}`));
  return row === undefined ? 0 : Number(row.trim().split(/\s+/)[0]?.replace(/,/g, ''));
}

/** A finished run of the example with the sim at `spec` and four workers. */
interface HabitsRun {
  readonly trunk: string;
  readonly workers: readonly TaskRecord[];
  readonly analysis: string;
}

/**
 * Runs the example with the sim at `spec` on four workers and checks what every habit's run must
 * show: it ends done and green, and leaves the checkout clean. Returns its trunk, its worker
 * tasks and what `colony analyze` says of it.
 */
async function runWithHabits(spec: string, goal = join(repo.dir, 'GOAL.md')): Promise<HabitsRun> {
  const result = await runCli(['run', goal, '--repo', repo.dir, '--model', spec, '--workers', '4', '--quiet']);
  expect(result.code, result.stderr).toBe(0);
  const { status, tasks } = await expectGreenRun(repo);
  expect(repo.git('status', '--porcelain')).toBe('');
  const analysis = (await runCli(['analyze', '--repo', repo.dir])).stdout;
  return { trunk: status.run.trunk ?? 'main', workers: tasks.filter((task) => task.kind === 'worker'), analysis };
}

describeRuns("real models' habits", () => {
  it('are caught: every worker that hands off done before merging is sent back once, a planner publishing everything at once is held to its bound, and the run ends done', async () => {
    // Four workers: a planner may publish 8 tasks in one answer; the sim tries 40.
    const { trunk, workers, analysis } = await runWithHabits('sim?seed=4&unmerged=1');
    // No done handoff whose work is not on the trunk.
    for (const task of workers.filter((each) => each.handoff?.status === 'done')) {
      for (const commit of task.handoff?.commits ?? []) expect(repo.git('merge-base', '--is-ancestor', commit, trunk)).toBe('');
    }
    expect(refused(analysis, 'Not landed:')).toBe(workers.length);
    expect(refused(analysis, 'Not published now:')).toBeGreaterThan(0);
    expect(refused(analysis, 'Not retried:')).toBe(0);
  }, RUN_TIMEOUT_MS);

  it('are caught: a worker writing a summary file into the repository is refused its merge once and none reaches the trunk; a planner publishing a failed task again without retry_of is refused once and retries it', async () => {
    // Workers crash one turn in fifty: with this seed five first attempts fail (a first attempt's
    // rolls follow from its brief alone) and their planner publishes them again, while a module
    // whose every attempt crashes, which would end the run partial, stays out of reach.
    const { trunk, workers, analysis } = await runWithHabits('sim?seed=4&notes=1&republish=1&crash=0.02');
    expect(repo.git('ls-tree', '-r', '--name-only', trunk).split('\n').filter(hasNoteName)).toEqual([]);
    const done = workers.filter((task) => task.handoff?.status === 'done');
    const failed = workers.filter((task) => task.handoff?.status === 'failed');
    // Every worker that landed its work was refused once on the way; none more than once.
    expect(refused(analysis, 'Not merged:')).toBeGreaterThanOrEqual(done.length);
    expect(refused(analysis, 'Not merged:')).toBeLessThanOrEqual(workers.length);
    // A failed first attempt published again is refused, and its retry goes through retry_of.
    expect(refused(analysis, 'Not published:')).toBeGreaterThan(0);
    expect(refused(analysis, 'Not published:')).toBeLessThanOrEqual(failed.length);
    expect(workers.filter((task) => task.retryOf !== null).length).toBeGreaterThanOrEqual(refused(analysis, 'Not published:'));
  }, RUN_TIMEOUT_MS);

  it("are caught: a worker skipping another module's failing test so that the suite passes is refused its merge once, and no skipped test reaches the trunk", async () => {
    // Half the Build tasks are told to merge untested and half the first attempts are wrong, so
    // main goes red and later workers' runs of the suite show other modules' tests failing.
    const { trunk, workers, analysis } = await runWithHabits('sim?seed=4&testfix=1&skiptests=0.5&bug=0.5');
    const testFiles = repo.git('ls-tree', '-r', '--name-only', trunk).split('\n').filter((path) => path.endsWith('.test.js'));
    expect(testFiles.length).toBeGreaterThan(1);
    expect(testFiles.filter((path) => repo.git('show', `${trunk}:${path}`).includes('test.skip('))).toEqual([]);
    expect(refused(analysis, 'Not merged (tests outside your task):')).toBeGreaterThan(0);
    expect(refused(analysis, 'Not merged (tests outside your task):')).toBeLessThanOrEqual(workers.length);
  }, RUN_TIMEOUT_MS);

  it('are caught: a planner publishing a module before the modules it uses landed gets the worker blocked, naming them, and publishes the task again once they landed', async () => {
    // Three modules of the goal import others: words.js case.js, palindrome.js words.js, stats.js clamp.js.
    const goal = join(repo.dir, 'GOAL.md');
    const text = readFileSync(goal, 'utf8');
    const uses: Record<string, string> = { 'src/strings/words.js': 'src/strings/case.js', 'src/strings/palindrome.js': 'src/strings/words.js', 'src/numbers/stats.js': 'src/numbers/clamp.js' };
    const withUses = Object.entries(uses).reduce((goalText, [path, used]) => goalText.replace(`"path": "${path}",`, `"path": "${path}",\n      "uses": ["${used}"],`), text);
    expect(withUses.match(/"uses"/g)).toHaveLength(3);
    writeFileSync(goal, withUses);
    repo.git('commit', '-qam', 'Modules that use others');
    const { trunk, workers, analysis } = await runWithHabits('sim?seed=4&dependent=1', goal);
    // Each dependent module's first task was handed back blocked, having landed nothing (no stub of what it lacked) ...
    const blocked = workers.filter((task) => task.handoff?.status === 'blocked');
    expect(blocked.length).toBeGreaterThan(0);
    for (const task of blocked) expect(task.handoff?.commits).toEqual([]);
    // ... and published again, through retry_of, once what it uses landed: every module is on the trunk, importing what it uses.
    for (const task of blocked) expect(workers.some((retry) => retry.retryOf === task.id && retry.handoff?.status === 'done')).toBe(true);
    for (const [path, used] of Object.entries(uses)) {
      expect(repo.git('show', `${trunk}:${path}`)).toContain(`import './${used.split('/').at(-1) ?? ''}';`);
    }
    expect(analysis).toMatch(new RegExp(`Retried tasks: ${blocked.length}\\b`));
  }, RUN_TIMEOUT_MS);
});
