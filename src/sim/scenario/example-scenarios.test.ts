import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildExample, exampleDir, runTestCommand, scenarioOfFile } from '../testing/example-build.js';
import { describeCase } from './module-render.js';
import type { Scenario } from './scenario.js';

const textKitDir = exampleDir('text-kit');
const taskFiles = readdirSync(join(textKitDir, 'tasks')).filter((file) => file.endsWith('.md')).sort();
const temporaryDirs: string[] = [];

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh copy of the example with the scenario's modules written the way the sim writes them. */
function materialise(scenario: Scenario, buggy: boolean): string {
  const dir = buildExample(textKitDir, scenario, { buggy: () => buggy });
  temporaryDirs.push(dir);
  return dir;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the text-kit example', () => {
  it('has between four and six tasks, one module each, in different folders', () => {
    expect(taskFiles.length).toBeGreaterThanOrEqual(4);
    expect(taskFiles.length).toBeLessThanOrEqual(6);
    const modules = taskFiles.map((file) => scenarioOfFile(join(textKitDir, 'tasks', file)).modules);
    expect(modules.every((list) => list.length === 1)).toBe(true);
    const folders = new Set(modules.map((list) => dirname(list[0]?.path ?? '')));
    expect(folders.size).toBeGreaterThanOrEqual(3);
    const withoutBody = modules.flatMap((list) => list.flatMap((module) => module.exports.filter((fn) => fn.body === undefined)));
    expect(withoutBody.length).toBeGreaterThanOrEqual(1);
    expect(withoutBody.length).toBeLessThanOrEqual(2);
  });

  it('has a goal that holds exactly the modules of the tasks, in order', () => {
    const goal = scenarioOfFile(join(textKitDir, 'GOAL.md'));
    const fromTasks = taskFiles.flatMap((file) => scenarioOfFile(join(textKitDir, 'tasks', file)).modules);
    expect(goal.modules).toEqual(fromTasks);
  });

  it.concurrent.each(taskFiles)('%s: what the sim writes passes the real tests', async (file) => {
    const scenario = scenarioOfFile(join(textKitDir, 'tasks', file));
    const result = await runTestCommand(materialise(scenario, false), scenario.project.test);
    expect(result.output).toMatch(/# fail 0/);
    expect(result.code).toBe(0);
  });

  it.concurrent.each(taskFiles)('%s: the wrong first attempt fails its real test', async (file) => {
    const scenario = scenarioOfFile(join(textKitDir, 'tasks', file));
    const result = await runTestCommand(materialise(scenario, true), scenario.project.test);
    expect(result.code).not.toBe(0);
    const first = scenario.modules[0]?.exports[0];
    const firstCase = first?.cases[0];
    if (first === undefined || firstCase === undefined) throw new Error(`${file} has no case`);
    expect(result.output).toMatch(new RegExp(`^not ok \\d+ - ${escapeRegExp(describeCase(first.name, firstCase))}$`, 'm'));
  });

  it('the whole goal, built at once, passes its real tests', async () => {
    const scenario = scenarioOfFile(join(textKitDir, 'GOAL.md'));
    const dir = materialise(scenario, false);
    const result = await runTestCommand(dir, scenario.project.test);
    expect(result.code).toBe(0);
    const index = readFileSync(join(dir, scenario.project.index), 'utf8');
    expect(index.split('\n').filter((line) => line.startsWith('export * from'))).toHaveLength(scenario.modules.length);
  });
});
