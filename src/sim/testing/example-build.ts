import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { indexLineFor, renderModuleSource, renderModuleTest, testPathFor } from '../scenario/module-render.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';
import { parseScenario } from '../scenario/scenario.js';

/**
 * The bundled example projects, built the way the sim builds them, for the tests that check
 * the examples really work: render every module into a fresh copy, run the project's own
 * test command for real.
 */

const run = promisify(execFile);

/** examples/<name> in this repository. */
export function exampleDir(name: string): string {
  return resolve(import.meta.dirname, '../../../examples', name);
}

/** The scenario in a goal or task file; throws with the parse error, since a broken example is a bug here. */
export function scenarioOfFile(file: string): Scenario {
  const parsed = parseScenario(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
  return parsed.scenario;
}

export interface BuildOptions {
  /** Whether a module gets the sim's wrong first attempt instead of its correct code. */
  readonly buggy: (module: SpecModule) => boolean;
}

/**
 * A fresh copy of the example in a new temporary directory (the caller removes it), with every
 * module of the scenario written the way the sim writes it: the module, its test, its index line.
 */
export function buildExample(sourceDir: string, scenario: Scenario, options: BuildOptions): string {
  const dir = mkdtempSync(join(tmpdir(), `colony-${posix.basename(sourceDir)}-`));
  cpSync(sourceDir, dir, { recursive: true });
  for (const module of scenario.modules) {
    mkdirSync(dirname(join(dir, module.path)), { recursive: true });
    writeFileSync(join(dir, module.path), renderModuleSource(module, { buggy: options.buggy(module) }));
    writeFileSync(join(dir, testPathFor(module.path)), renderModuleTest(module));
    appendFileSync(join(dir, scenario.project.index), `${indexLineFor(scenario.project.index, module.path)}\n`);
  }
  return dir;
}

export interface TestRun {
  readonly code: number;
  readonly output: string;
}

/** Runs the project's test command in `dir` through bash, as run_command does. */
export async function runTestCommand(dir: string, command: string): Promise<TestRun> {
  try {
    const { stdout, stderr } = await run('bash', ['-c', command], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

/** What one planner makes of its modules: see `splitByArea`. */
export interface PlannerSplit {
  readonly base: string;
  /** Modules directly in the base: one worker task each. */
  readonly direct: readonly string[];
  readonly areas: readonly PlannerArea[];
}

export interface PlannerArea {
  readonly folder: string;
  readonly modules: readonly string[];
  /** The sub-planner's own split when the area is large enough to delegate; null when its modules become worker tasks. */
  readonly delegated: PlannerSplit | null;
}

/** An area with more modules than this goes to a sub-planner. */
export const DELEGATE_ABOVE = 8;

/**
 * How a planner splits a goal's modules by folder: its base is the longest common folder of
 * its modules; a module's area is the first folder below the base; an area with more than
 * `DELEGATE_ABOVE` modules goes to a sub-planner, which splits its own modules the same way;
 * a smaller area, and each module directly in the base, becomes worker tasks.
 */
export function splitByArea(modulePaths: readonly string[]): PlannerSplit {
  const base = commonFolder(modulePaths);
  const direct: string[] = [];
  const byArea = new Map<string, string[]>();
  for (const path of modulePaths) {
    const below = (base === '' ? path : path.slice(base.length + 1)).split('/');
    if (below.length === 1) {
      direct.push(path);
      continue;
    }
    const folder = base === '' ? (below[0] ?? '') : `${base}/${below[0] ?? ''}`;
    byArea.set(folder, [...(byArea.get(folder) ?? []), path]);
  }
  const areas = [...byArea].map(([folder, modules]) => ({
    folder,
    modules,
    delegated: modules.length > DELEGATE_ABOVE ? splitByArea(modules) : null,
  }));
  return { base, direct, areas };
}

function commonFolder(paths: readonly string[]): string {
  const folders = paths.map((path) => (posix.dirname(path) === '.' ? [] : posix.dirname(path).split('/')));
  const first = folders[0] ?? [];
  let length = 0;
  while (length < first.length && folders.every((parts) => parts[length] === first[length])) length += 1;
  return first.slice(0, length).join('/');
}
