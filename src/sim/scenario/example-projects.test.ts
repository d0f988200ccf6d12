import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failingTestNames, passCount } from '../reading/command-output.js';
import { DELEGATE_ABOVE, buildExample, exampleDir, runTestCommand, scenarioOfFile, splitByArea } from '../testing/example-build.js';
import { describeCase } from './module-render.js';
import type { Scenario } from './scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';

const temporaryDirs: string[] = [];

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

function build(name: string, scenario: Scenario, buggy: (module: SpecModule) => boolean): string {
  const dir = buildExample(exampleDir(name), scenario, { buggy });
  temporaryDirs.push(dir);
  return dir;
}

function functionNames(scenario: Scenario): string[] {
  return scenario.modules.flatMap((module) => module.exports.map((fn) => fn.name));
}

/** Names that another name starts with: a failing test named `sumBy(...)` would also start with `sum`. */
function namesStartingOthers(names: readonly string[]): string[] {
  return names.filter((name) => names.some((other) => other !== name && other.startsWith(name)));
}

function caseCount(scenario: Scenario): number {
  return scenario.modules.reduce((total, module) => total + module.exports.reduce((sum, fn) => sum + fn.cases.length, 0), 0);
}

function firstCaseName(module: SpecModule): string {
  const fn = module.exports[0];
  const firstCase = fn?.cases[0];
  if (fn === undefined || firstCase === undefined) throw new Error(`${module.path} has no case`);
  return describeCase(fn.name, firstCase);
}

function moduleAt(scenario: Scenario, path: string): SpecModule {
  const module = scenario.modules.find((candidate) => candidate.path === path);
  if (module === undefined) throw new Error(`no module ${path}`);
  return module;
}

describe('the toolbox example', () => {
  const scenario = scenarioOfFile(join(exampleDir('toolbox'), 'GOAL.md'));

  it('has 12 modules in two areas of six, so the root planner hands every module to a worker itself', () => {
    expect(scenario.project.test).toBe('node scripts/test.js');
    const split = splitByArea(scenario.modules.map((module) => module.path));
    expect(split.base).toBe('src');
    expect(split.direct).toEqual([]);
    expect(split.areas.map((area) => [area.folder, area.modules.length])).toEqual([
      ['src/strings', 6],
      ['src/numbers', 6],
    ]);
    expect(split.areas.every((area) => area.delegated === null)).toBe(true);
  });

  it('names each function once, no name starts another, and a few are answered by their cases only', () => {
    const names = functionNames(scenario);
    expect(new Set(names).size).toBe(names.length);
    expect(namesStartingOthers(names)).toEqual([]);
    const caseOnly = scenario.modules.flatMap((module) => module.exports.filter((fn) => fn.body === undefined));
    expect(caseOnly.length).toBeGreaterThanOrEqual(1);
    expect(caseOnly.length).toBeLessThanOrEqual(3);
    const caseCounts = scenario.modules.flatMap((module) => module.exports.map((fn) => fn.cases.length));
    expect(Math.min(...caseCounts)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...caseCounts)).toBeLessThanOrEqual(4);
  });

  it('built the way the sim builds it, its tests pass', async () => {
    const dir = build('toolbox', scenario, () => false);
    const result = await runTestCommand(dir, scenario.project.test);
    expect(failingTestNames(result.output)).toEqual([]);
    expect(passCount(result.output)).toBeGreaterThanOrEqual(caseCount(scenario));
    expect(result.code).toBe(0);
    const index = readFileSync(join(dir, scenario.project.index), 'utf8');
    expect(index.split('\n').filter((line) => line.startsWith('export * from'))).toHaveLength(12);
  });

  it('with one wrong first attempt, its tests fail and name that case', async () => {
    const wrong = moduleAt(scenario, 'src/numbers/stats.js');
    const result = await runTestCommand(
      build('toolbox', scenario, (module) => module === wrong),
      scenario.project.test,
    );
    expect(result.code).not.toBe(0);
    expect(failingTestNames(result.output)).toEqual([firstCaseName(wrong)]);
  });
});

describe('the stdlib example', () => {
  const scenario = scenarioOfFile(join(exampleDir('stdlib'), 'GOAL.md'));
  const split = splitByArea(scenario.modules.map((module) => module.path));

  it('has at least 150 modules in at least 10 areas under src/', () => {
    expect(scenario.modules.length).toBeGreaterThanOrEqual(150);
    expect(split.base).toBe('src');
    expect(split.areas.length).toBeGreaterThanOrEqual(10);
  });

  it('nests deep enough that sub-planners delegate again, in at least two areas', () => {
    const delegatingTwice = split.areas.filter(
      (area) => area.delegated !== null && area.delegated.areas.some((inner) => inner.modules.length > DELEGATE_ABOVE),
    );
    expect(delegatingTwice.length).toBeGreaterThanOrEqual(2);
  });

  it('gives every function a body and two or three cases, and names each once, no name starting another', () => {
    const functions = scenario.modules.flatMap((module) => module.exports);
    expect(functions.filter((fn) => fn.body === undefined)).toEqual([]);
    expect(functions.filter((fn) => fn.cases.length < 2 || fn.cases.length > 3).map((fn) => fn.name)).toEqual([]);
    const names = functionNames(scenario);
    expect(new Set(names).size).toBe(names.length);
    expect(namesStartingOthers(names)).toEqual([]);
  });

  it('built the way the sim builds it, its single-process runner passes every case', async () => {
    expect(scenario.project.test).toBe('node scripts/test.js');
    const packageJson = JSON.parse(readFileSync(join(exampleDir('stdlib'), 'package.json'), 'utf8')) as { scripts: { test: string } };
    expect(packageJson.scripts.test).toBe(scenario.project.test);
    const dir = build('stdlib', scenario, () => false);
    const result = await runTestCommand(dir, scenario.project.test);
    expect(failingTestNames(result.output)).toEqual([]);
    expect(passCount(result.output)).toBeGreaterThanOrEqual(caseCount(scenario));
    expect(result.code).toBe(0);
  });

  it('with a wrong first attempt and a module that does not load, the runner fails, names both and runs the rest', async () => {
    const wrong = moduleAt(scenario, 'src/text/case/camel.js');
    const broken = moduleAt(scenario, 'src/paths/join.js');
    const dir = build('stdlib', scenario, (module) => module === wrong);
    writeFileSync(join(dir, broken.path), 'export function joinPath(parts {\n');
    const result = await runTestCommand(dir, scenario.project.test);
    expect(result.code).not.toBe(0);
    const failing = failingTestNames(result.output);
    expect(failing).toContain(firstCaseName(wrong));
    expect(failing).toContain('src/paths/join.test.js loads');
    expect(failing.filter((name) => name !== firstCaseName(wrong) && name !== 'src/paths/join.test.js loads')).toEqual([
      'the index loads and re-exports only functions',
    ]);
    const brokenCases = broken.exports.reduce((total, fn) => total + fn.cases.length, 0);
    expect(passCount(result.output)).toBeGreaterThanOrEqual(caseCount(scenario) - brokenCases - 1);
  });
});
