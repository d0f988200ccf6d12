import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCase } from './module-render.js';
import type { Scenario } from './scenario.js';
import { indexLineFor, parseScenario, renderModuleSource, renderModuleTest, testPathFor } from './scenario.js';

const run = promisify(execFile);
const exampleDir = resolve(import.meta.dirname, '../../../examples/text-kit');
const taskFiles = readdirSync(join(exampleDir, 'tasks')).filter((file) => file.endsWith('.md')).sort();
const temporaryDirs: string[] = [];

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

function scenarioOf(file: string): Scenario {
  const parsed = parseScenario(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
  return parsed.scenario;
}

/** A fresh copy of the example with the scenario's modules written the way the sim writes them. */
function materialise(scenario: Scenario, buggy: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'colony-text-kit-'));
  temporaryDirs.push(dir);
  cpSync(exampleDir, dir, { recursive: true });
  for (const module of scenario.modules) {
    mkdirSync(dirname(join(dir, module.path)), { recursive: true });
    writeFileSync(join(dir, module.path), renderModuleSource(module, { buggy }));
    writeFileSync(join(dir, testPathFor(module.path)), renderModuleTest(module));
    appendFileSync(join(dir, scenario.project.index), `${indexLineFor(scenario.project.index, module.path)}\n`);
  }
  return dir;
}

async function runTests(dir: string, command: string): Promise<{ code: number; output: string }> {
  const [program, ...args] = command.split(' ');
  try {
    const { stdout, stderr } = await run(program ?? 'node', args, { cwd: dir });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the text-kit example', () => {
  it('has between four and six tasks, one module each, in different folders', () => {
    expect(taskFiles.length).toBeGreaterThanOrEqual(4);
    expect(taskFiles.length).toBeLessThanOrEqual(6);
    const modules = taskFiles.map((file) => scenarioOf(join(exampleDir, 'tasks', file)).modules);
    expect(modules.every((list) => list.length === 1)).toBe(true);
    const folders = new Set(modules.map((list) => dirname(list[0]?.path ?? '')));
    expect(folders.size).toBeGreaterThanOrEqual(3);
    const withoutBody = modules.flatMap((list) => list.flatMap((module) => module.exports.filter((fn) => fn.body === undefined)));
    expect(withoutBody.length).toBeGreaterThanOrEqual(1);
    expect(withoutBody.length).toBeLessThanOrEqual(2);
  });

  it('has a goal that holds exactly the modules of the tasks, in order', () => {
    const goal = scenarioOf(join(exampleDir, 'GOAL.md'));
    const fromTasks = taskFiles.flatMap((file) => scenarioOf(join(exampleDir, 'tasks', file)).modules);
    expect(goal.modules).toEqual(fromTasks);
  });

  it.concurrent.each(taskFiles)('%s: what the sim writes passes the real tests', async (file) => {
    const scenario = scenarioOf(join(exampleDir, 'tasks', file));
    const result = await runTests(materialise(scenario, false), scenario.project.test);
    expect(result.output).toMatch(/# fail 0/);
    expect(result.code).toBe(0);
  });

  it.concurrent.each(taskFiles)('%s: the wrong first attempt fails its real test', async (file) => {
    const scenario = scenarioOf(join(exampleDir, 'tasks', file));
    const result = await runTests(materialise(scenario, true), scenario.project.test);
    expect(result.code).not.toBe(0);
    const first = scenario.modules[0]?.exports[0];
    const firstCase = first?.cases[0];
    if (first === undefined || firstCase === undefined) throw new Error(`${file} has no case`);
    expect(result.output).toMatch(new RegExp(`^not ok \\d+ - ${escapeRegExp(describeCase(first.name, firstCase))}$`, 'm'));
  });

  it('the whole goal, built at once, passes its real tests', async () => {
    const scenario = scenarioOf(join(exampleDir, 'GOAL.md'));
    const dir = materialise(scenario, false);
    const result = await runTests(dir, scenario.project.test);
    expect(result.code).toBe(0);
    const index = readFileSync(join(dir, scenario.project.index), 'utf8');
    expect(index.split('\n').filter((line) => line.startsWith('export * from'))).toHaveLength(scenario.modules.length);
  });
});
