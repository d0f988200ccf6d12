import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failingTestNames, passCount } from '../reading/command-output.js';
import { runTestCommand, splitByArea } from '../testing/example-build.js';
import { LONG_SCENARIO_KINDS } from './long-scenario-modules.js';
import { LONG_SCENARIO_TEST_COMMAND, longScenario, writeLongScenario } from './long-scenario.js';
import { indexLineFor, renderModuleSource, renderModuleTest, testPathFor } from './module-render.js';
import { createPlannerSession } from '../testing/planner-tools.js';
import { parseScenario } from './scenario.js';
import type { Scenario } from './scenario.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { driveWorker } from '../testing/tool-executor.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function generated(modules: number): Promise<{ dir: string; goal: string; scenario: Scenario }> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-long-scenario-'));
  dirs.push(dir);
  const { goalPath } = await writeLongScenario(dir, modules);
  const goal = readFileSync(goalPath, 'utf8');
  const parsed = parseScenario(goal);
  if (!parsed.ok) throw new Error(parsed.error);
  return { dir, goal, scenario: parsed.scenario };
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
}

/** Writes every module the way the sim does: module, test file, index line. */
function buildAll(dir: string, scenario: Scenario, buggy: (path: string) => boolean): void {
  for (const module of scenario.modules) {
    writeFileSync(join(dir, module.path), renderModuleSource(module, { buggy: buggy(module.path) }));
    writeFileSync(join(dir, testPathFor(module.path)), renderModuleTest(module));
    appendFileSync(join(dir, scenario.project.index), `${indexLineFor(scenario.project.index, module.path)}\n`);
  }
}

describe('writeLongScenario', () => {
  it('makes a git repository with one commit on main holding a goal of tiny modules in one folder', async () => {
    const { dir, goal, scenario } = await generated(20);
    expect(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'ls-files').split('\n').sort()).toEqual(['GOAL.md', 'package.json', 'scripts/report.js', 'scripts/test.js', 'src/index.js', 'src/index.test.js']);
    expect(scenario.project).toEqual({ test: LONG_SCENARIO_TEST_COMMAND, index: 'src/index.js' });
    expect(scenario.modules).toHaveLength(20);
    expect(scenario).toEqual(longScenario(20));
    const split = splitByArea(scenario.modules.map((module) => module.path));
    expect(split).toMatchObject({ base: 'src/lib', areas: [] });
    expect(split.direct).toHaveLength(20);
    const names = scenario.modules.map((module) => module.exports[0]?.name ?? '');
    expect(new Set(names).size).toBe(20);
    expect(names.filter((name) => names.some((other) => other !== name && other.startsWith(name)))).toEqual([]);
    const stems = new Set(names.map((name) => name.replace(/\d+$/, '')));
    expect(stems.size).toBe(LONG_SCENARIO_KINDS);
    expect(scenario.modules.every((module) => module.exports.every((fn) => fn.cases.length >= 2))).toBe(true);
    expect(goal).toBe(readFileSync(join((await generated(20)).dir, 'GOAL.md'), 'utf8'));
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({ type: 'module', scripts: { test: LONG_SCENARIO_TEST_COMMAND } });
  });

  it('is published by the root planner itself, one task per module, 40 an answer', async () => {
    const { goal } = await generated(100);
    const session = createPlannerSession({ brief: goal });
    const counts = [session.turn(), session.turn(), session.turn()].map((answer) => answer.toolCalls.filter((call) => call.name === 'create_task').length);
    expect(counts).toEqual([40, 40, 20]);
    expect(session.tasks.every((task) => task.kind === 'worker')).toBe(true);
  });

  it('has a module the sim worker builds, tests and hands off from the brief its planner writes', async () => {
    const { dir, goal } = await generated(20);
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const task = session.tasks[6];
    if (task === undefined) throw new Error('no seventh task');
    const run = driveWorker({ dir, task: task.brief, options: DEFAULT_SIM_OPTIONS });
    expect(run.handoff?.status).toBe('done');
    // Twenty modules: the worker runs the tests that cover its module, not the whole suite.
    const parsed = parseScenario(task.brief);
    const testFile = testPathFor((parsed.ok ? parsed.scenario.modules[0]?.path : undefined) ?? 'none');
    expect(String(run.handoff?.evidence)).toMatch(new RegExp(`^\\$ node --test ${testFile}\\nexit code: 0\\n[\\s\\S]*# pass 2\\n`));
    expect(readFileSync(join(dir, 'src/index.js'), 'utf8')).toContain("export * from './lib/");
  });

  it('runs the tests of the finished tree in one fast process, and names a failing case', async () => {
    const { dir, scenario } = await generated(20);
    const cases = scenario.modules.reduce((sum, module) => sum + (module.exports[0]?.cases.length ?? 0), 0);
    buildAll(dir, scenario, () => false);
    const started = Date.now();
    const passing = await runTestCommand(dir, LONG_SCENARIO_TEST_COMMAND);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(passing.code).toBe(0);
    expect(passCount(passing.output)).toBe(cases + 1);
    expect(passing.output.split('\n').filter((line) => line.length > 0).length).toBeLessThan(12);
    const broken = scenario.modules[4];
    if (broken === undefined) throw new Error('no fifth module');
    writeFileSync(join(dir, broken.path), renderModuleSource(broken, { buggy: true }));
    const failing = await runTestCommand(dir, LONG_SCENARIO_TEST_COMMAND);
    expect(failing.code).not.toBe(0);
    expect(failingTestNames(failing.output)).toHaveLength(1);
    expect(failingTestNames(failing.output)[0]).toMatch(new RegExp(`^${broken.exports[0]?.name ?? 'none'}\\(`));
  });
});
