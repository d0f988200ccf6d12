import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { longScenarioModule } from './long-scenario-modules.js';
import { specBlock } from './scenario.js';
import type { Scenario } from './scenario.js';
import { testPathFor } from './module-render.js';

/**
 * The long scenario: a goal of many tiny modules, all in one folder, for runs of thousands of
 * model calls. With every module directly in `src/lib/`, the root planner has no area to
 * delegate and publishes one task per module itself (40 an answer), so it alone receives a
 * handoff for each: a goal of 600 modules is 600 handoffs to one planner, and about ten model
 * calls per worker make it some 6,000 calls in all.
 *
 * Its tests run in one node process (`scripts/test.js` imports every test file), not one per
 * file as `node --test` would, and print only the failing tests and the counts
 * (`scripts/report.js`), so a run of hundreds of files takes a second and reads in a glance.
 */

const run = promisify(execFile);

export const LONG_SCENARIO_FOLDER = 'src/lib/';
export const LONG_SCENARIO_TEST_COMMAND = 'node --test-reporter=./scripts/report.js scripts/test.js';
const INDEX = 'src/index.js';

const TEST_SCRIPT = `// Runs every *.test.js under src/ in this one process, in path order: \`node --test\` would
// start a process per file, which with hundreds of files costs seconds of CPU on every run.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sourceDir = fileURLToPath(new URL('../src/', import.meta.url));
const testFiles = readdirSync(sourceDir, { recursive: true })
  .map((file) => file.split('\\\\').join('/'))
  .filter((file) => file.endsWith('.test.js'))
  .sort();

for (const file of testFiles) {
  try {
    await import(pathToFileURL(join(sourceDir, file)).href);
  } catch (error) {
    // A file that cannot load fails as a test of its own, so the other files still run.
    test(\`src/\${file} loads\`, () => {
      throw error;
    });
  }
}
`;

const REPORT_SCRIPT = `// A node:test reporter that prints only what a reader acts on: each failing test as a TAP
// line with the first line of its error, then the counts (# tests, # pass, # fail, ...).
export default async function* report(source) {
  let failed = 0;
  for await (const event of source) {
    if (event.type === 'test:fail') {
      failed += 1;
      const error = event.data.details?.error;
      const reason = String(error?.cause?.message ?? error?.message ?? 'failed').split('\\n')[0];
      yield \`not ok \${failed} - \${event.data.name}\\n  \${reason}\\n\`;
    } else if (event.type === 'test:diagnostic') {
      yield \`# \${event.data.message}\\n\`;
    }
  }
}
`;

const INDEX_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';

test('the index loads and re-exports only functions', async () => {
  const api = await import('./index.js');
  for (const [name, value] of Object.entries(api)) assert.equal(typeof value, 'function', name);
});
`;

/** The scenario of the long run: `modules` modules, numbered from 1, all in `src/lib/`. */
export function longScenario(modules: number): Scenario {
  if (!Number.isSafeInteger(modules) || modules < 1) throw new Error(`a long scenario needs at least one module, not ${modules}`);
  return {
    project: { test: LONG_SCENARIO_TEST_COMMAND, index: INDEX },
    modules: Array.from({ length: modules }, (_, index) => longScenarioModule(index + 1, modules, LONG_SCENARIO_FOLDER)),
  };
}

function goalText(scenario: Scenario): string {
  const count = scenario.modules.length;
  const first = scenario.modules[0]?.path ?? `${LONG_SCENARIO_FOLDER}module.js`;
  return [
    '# A long run',
    '',
    `Build ${count} small, dependency-free helpers, every one in its own file directly in \`${LONG_SCENARIO_FOLDER}\`. ` +
      'Each module exports the function the colony-spec below gives it, answering the listed cases, ' +
      `has a node:test file next to it that checks each case (\`${first}\` → \`${testPathFor(first)}\`), ` +
      `and is re-exported from \`${INDEX}\` with \`export * from '...'\`. Function names are unique, so the index can re-export them all.`,
    '',
    `The project's tests (\`${LONG_SCENARIO_TEST_COMMAND}\`) run every \`*.test.js\` under \`src/\` in one process and print ` +
      'only the failing tests and the counts. They must pass on main.',
    '',
    specBlock(scenario.project, scenario.modules),
    '',
  ].join('\n');
}

/**
 * Writes the long scenario into `dir` (which must be empty or missing) as a git repository
 * with one commit on main: the goal with `modules` modules, package.json, the test scripts,
 * an empty index and its test. Returns where the goal is.
 */
export async function writeLongScenario(dir: string, modules: number): Promise<{ goalPath: string }> {
  const scenario = longScenario(modules);
  await mkdir(join(dir, 'scripts'), { recursive: true });
  await mkdir(join(dir, LONG_SCENARIO_FOLDER), { recursive: true });
  const packageJson = { name: 'long-run', type: 'module', private: true, scripts: { test: LONG_SCENARIO_TEST_COMMAND } };
  const files: Record<string, string> = {
    'GOAL.md': goalText(scenario),
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'scripts/test.js': TEST_SCRIPT,
    'scripts/report.js': REPORT_SCRIPT,
    [INDEX]: "// The package's public API: every module is re-exported here.\n",
    'src/index.test.js': INDEX_TEST,
  };
  for (const [path, content] of Object.entries(files)) await writeFile(join(dir, path), content);
  const git = (...args: string[]): Promise<unknown> => run('git', ['-C', dir, ...args]);
  await git('init', '--quiet', '--initial-branch=main');
  await git('add', '--all');
  await git('-c', 'user.name=colony', '-c', 'user.email=colony@localhost', 'commit', '--quiet', '--message', `A long run: ${modules} modules in ${LONG_SCENARIO_FOLDER}`);
  return { goalPath: join(dir, 'GOAL.md') };
}
