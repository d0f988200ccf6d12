import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** A whole run of the small example takes tens of seconds, more on a loaded machine. */
const RUN_TIMEOUT_MS = 300_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

describeRuns('colony run', () => {
  it('builds the small example with a root planner and four workers, and reports it', async () => {
    const start = repo.git('rev-parse', 'main').trim();
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '4', '--json']);
    expect(result.code).toBe(0);
    const outcome = JSON.parse(result.stdout) as { status: string; check: { passed: boolean }; main: string };
    expect(outcome).toMatchObject({ status: 'done', check: { passed: true } });
    const { status: found, tasks } = await expectGreenRun(repo);
    // The run landed on a branch of its own, and the outcome names its last commit.
    const trunk = found.run.trunk ?? '';
    expect(trunk).toMatch(/^colony\//);
    expect(found.run.checkedOut).toBe('main');
    expect(repo.git('rev-parse', trunk).trim()).toBe(outcome.main);
    // The user's main and checkout are not touched: main is where it was, nothing shows as changed.
    expect(repo.git('rev-parse', 'main').trim()).toBe(start);
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    expect(repo.git('status', '--porcelain')).toBe('');
    const root = found.agents.find((agent) => agent.role === 'root-planner');
    expect(found.agents.filter((agent) => agent.role === 'worker').every((worker) => worker.parentId === root?.id)).toBe(true);

    const text = await runCli(['status', '--repo', repo.dir]);
    expect(text.stdout).toMatch(/root-planner planner-\S+ +done/);

    // The sim planner declared each task's files; colony recorded and stored them, and told it of overlaps.
    const events = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'task.created,tool.ended,agent.nudged'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ColonyEvent);
    const created = events.flatMap((event) => (event.type === 'task.created' && event.data.kind === 'worker' ? [event.data] : []));
    expect(created.length).toBeGreaterThanOrEqual(12);
    for (const task of created) {
      const module = task.title.replace(/^(Build|Fix) /, '').split(':')[0] ?? '';
      expect(task.paths).toEqual([module, module.replace(/\.js$/, '.test.js'), 'src/index.js']);
      expect(tasks.find((stored) => stored.id === task.taskId)?.paths).toEqual(task.paths);
    }
    const overlaps = events.filter((event) => event.type === 'tool.ended' && event.data.name === 'create_task' && event.data.output.includes('Overlap:'));
    expect(overlaps.length).toBeGreaterThan(0);
    const notices = events.filter((event) => event.type === 'agent.nudged' && event.agentId === root?.id && event.data.message.startsWith('Files in flight'));
    expect(notices.at(-1)).toMatchObject({ data: { message: expect.stringMatching(/- src\/index\.js: \d+ landings/) } });
  }, RUN_TIMEOUT_MS);

  it('still finishes green when workers write bugs, send malformed calls and die; the dead ones are retried', async () => {
    const model = 'sim?seed=11&bug=0.2&malformed=0.05&crash=0.05';
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', model, '--workers', '4', '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const green = await expectGreenRun(repo);
    const { tasks } = green;
    const synthetic = tasks.filter((task) => task.handoff?.synthetic === true);
    expect(synthetic.length).toBeGreaterThan(0);
    for (const dead of synthetic) {
      const retry = tasks.find((task) => task.retryOf === dead.id);
      expect(retry?.body).toContain('## Earlier attempts');
    }
    // Every module whose first task died was landed by a retry in the end.
    const doneTitles = new Set(tasks.filter((task) => task.status === 'done').map((task) => task.title.replace(/^(Build|Fix) /, '').split(':')[0]));
    for (const dead of synthetic) expect(doneTitles.has(dead.title.replace(/^Build /, ''))).toBe(true);
    // What the dead workers left is kept under colony's own refs, and their branches are gone:
    // of colony's, the user's branch list holds only the run's branch and its green branch.
    const salvaged = await runCli(['events', '--repo', repo.dir, '--json', '--type', 'workspace.salvaged']);
    const refs = salvaged.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { data: { branch: string } }).data.branch);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(ref).toMatch(/^refs\/colony\/salvaged\/worker-[a-z0-9]+$/);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/colony/salvaged/').trim().split('\n').sort()).toEqual(expect.arrayContaining([...refs].sort()));
    const trunk = green.status.run.trunk ?? '';
    expect(trunk).toMatch(/^colony\//);
    expect(repo.git('branch', '--list')).toBe(`  ${trunk}\n  ${trunk}-green\n* main\n`);
    // colony status says where the work is and how to look at it.
    const status = await runCli(['status', '--repo', repo.dir]);
    expect(status.stdout).toContain(`Salvaged work, not on main: ${refs.length} workspace${refs.length === 1 ? '' : 's'} (look with git log ${refs[0] ?? ''})`);
    expect(status.stdout).toMatch(new RegExp(`^  ${refs[0] ?? ''} \\(worker-\\S+`, 'm'));
  }, RUN_TIMEOUT_MS);

  it('runs the merge check on every merge before main moves, when asked', async () => {
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '4', '--quiet', '--merge-check', 'node scripts/test.js']);
    expect(result.code).toBe(0);
    await expectGreenRun(repo);
    const listed = await runCli(['events', '--repo', repo.dir, '--json', '--type', 'merge.landed,merge.checked']);
    const events = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; data: { commit: string; passed?: boolean } });
    const landed = events.filter((event) => event.type === 'merge.landed').map((event) => event.data.commit);
    const checked = new Set(events.filter((event) => event.type === 'merge.checked' && event.data.passed === true).map((event) => event.data.commit));
    expect(landed.length).toBeGreaterThan(0);
    // Each landing was checked on exactly the commit that then became main.
    for (const commit of landed) expect(checked.has(commit)).toBe(true);

    const blank = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--merge-check', ' ']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('expected a command to run');
  }, RUN_TIMEOUT_MS);

  it('refuses bad input with exit 2 and a message that says what to do, changing nothing', async () => {
    const missing = await runCli(['run', join(repo.dir, 'NOPE.md'), '--repo', repo.dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');

    writeFileSync(join(repo.dir, 'src', 'index.js'), '// edited by hand\n');
    // A run that lands on the branch checked out keeps it in step, so it needs a clean tree.
    const dirty = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main']);
    expect(dirty.code).toBe(2);
    expect(dirty.stderr).toContain('uncommitted changes (src/index.js)');
    expect(repo.git('status', '--porcelain')).toBe(' M src/index.js\n');
    // A refused command leaves no state directory it made, lock and all.
    expect(existsSync(defaultStateDir(repo.dir))).toBe(false);
    repo.git('checkout', '--', 'src/index.js');
    for (const refused of [['green', '--now'], ['resume']]) {
      const result = await runCli([...refused, '--repo', repo.dir]);
      expect(result.code, refused.join(' ')).toBe(2);
      expect(existsSync(defaultStateDir(repo.dir)), refused.join(' ')).toBe(false);
    }

    const workers = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--workers', 'many']);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('expected a positive whole number');

    const model = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?speed=9']);
    expect(model.code).toBe(2);
    expect(model.stderr).toContain('unknown key "speed"');

    const window = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--context-window', '500']);
    expect(window.code).toBe(2);
    expect(window.stderr).toContain('too small: at least 2000 tokens');
    const compactAt = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--compact-at', '5']);
    expect(compactAt.code).toBe(2);
    expect(compactAt.stderr).toContain('--compact-at takes a percentage from 10 to 100');
    const reflect = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--reflect-every', 'planners=3']);
    expect(reflect.code).toBe(2);
    expect(reflect.stderr).toContain('--reflect-every takes a number of steps');
  });
});

describe('colony run refusing a goal before anything is recorded', () => {
  it('refuses a goal that is not text, and a free-form goal given to the sim, with exit 2 and what to do', async () => {
    writeFileSync(join(repo.dir, 'program.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x03, 0x00, 0x3e, 0x00]));
    const binary = await runCli(['run', join(repo.dir, 'program.bin'), '--repo', repo.dir, '--model', 'sim', '--state', join(repo.dir, '..', 'binary-state')]);
    expect(binary.code).toBe(2);
    expect(binary.stderr).toContain(`the goal file ${join(repo.dir, 'program.bin')} is not text (it is not UTF-8, or it holds NUL bytes)`);

    const freeForm = join(repo.dir, '..', 'FREE.md');
    writeFileSync(freeForm, '# Make the CLI faster\n\nMake `toolbox --help` answer in under 100 ms.\n');
    const sim = await runCli(['run', freeForm, '--repo', repo.dir, '--model', 'sim?seed=3', '--state', join(repo.dir, '..', 'sim-state')]);
    expect(sim.code).toBe(2);
    expect(sim.stderr).toContain('the simulated model (sim) builds only goals written for it');
    expect(sim.stderr).toContain('colony sim-server');
    expect(existsSync(join(repo.dir, '..', 'binary-state'))).toBe(false);
    expect(existsSync(join(repo.dir, '..', 'sim-state'))).toBe(false);
    expect(existsSync(defaultStateDir(repo.dir))).toBe(false);
  });
});

describe('colony status', () => {
  it('says there is no run, with exit 2, where none ran', async () => {
    const result = await runCli(['status', '--repo', repo.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('there is no run');
  });
});
