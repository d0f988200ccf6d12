import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseScenario } from '../../src/sim/scenario/scenario.js';
import type { ExampleRepository } from './example-repository.js';

/**
 * Replaces the example's goal with one holding only the named modules (and the project test
 * command given, else the example's), committed on main: a run of a few tasks, for tests that
 * need a whole run but not a whole example.
 */
export function keepModules(repo: ExampleRepository, paths: readonly string[], test?: string): void {
  const parsed = parseScenario(repo.git('show', 'main:GOAL.md'));
  if (!parsed.ok) throw new Error(parsed.error);
  const { project, modules } = parsed.scenario;
  const kept = modules.filter((module) => paths.includes(module.path));
  if (kept.length !== paths.length) throw new Error(`the example has no module ${paths.find((path) => !kept.some((module) => module.path === path)) ?? ''}`);
  const spec = { project: { ...project, ...(test === undefined ? {} : { test }) }, modules: kept };
  const goal = [
    '# A few modules',
    '',
    `Build ${kept.map((module) => `\`${module.path}\``).join(', ')}, each with a node:test file next to it, re-exported from \`${project.index}\`.`,
    '',
    '```colony-spec',
    JSON.stringify(spec, null, 2),
    '```',
    '',
  ].join('\n');
  writeFileSync(join(repo.dir, 'GOAL.md'), goal);
  repo.git('commit', '-q', '-am', 'a smaller goal');
}
