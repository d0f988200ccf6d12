import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies } from '../testing/tool-executor.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const INSTALL = 'npm install --save-exact --ignore-scripts --no-audit --no-fund is-odd@3.0.1 kind-of@6.0.3';

/** The pad task, its module importing two packages from the npm registry. */
const task = padTask.replace('"path": "src/text/pad.js",', '"path": "src/text/pad.js",\n      "packages": { "is-odd": "3.0.1", "kind-of": "6.0.3" },');

afterEach(removeExampleCopies);

/** What npm's install leaves in the project: the packages in node_modules, importable. */
function installInto(dir: string): void {
  for (const name of ['is-odd', 'kind-of']) {
    mkdirSync(join(dir, 'node_modules', name), { recursive: true });
    writeFileSync(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
    writeFileSync(join(dir, 'node_modules', name, 'index.js'), 'module.exports = () => true;\n');
  }
}

/**
 * Drives the sim worker on the pad task in a fresh copy of the example, `answer` standing in
 * for each command's output (null: run it for real); returns the run, its folder and every
 * command it asked for, in order.
 */
function drivePad(answer: (command: string, dir: string) => string | null) {
  const dir = copyExample();
  const commands: string[] = [];
  const run = driveWorker({
    dir,
    task,
    options: DEFAULT_SIM_OPTIONS,
    answerCommand: (command) => {
      commands.push(command);
      return answer(command, dir);
    },
  });
  return { dir, run, commands };
}

describe('a sim worker whose module imports packages', () => {
  it('adds them with npm install before writing the module, which imports them, and goes on to done', () => {
    const { dir, run, commands } = drivePad((command, folder) => {
      if (command !== INSTALL) return null;
      installInto(folder);
      return 'exit code: 0\n\nadded 2 packages in 1s\n';
    });
    expect(run.handoff?.status).toBe('done');
    const calls = run.executed.map((each) => each.call.name);
    expect(calls.indexOf('run_command')).toBeLessThan(calls.indexOf('write_file'));
    expect(commands.filter((command) => command === INSTALL)).toHaveLength(1);
    const source = readFileSync(join(dir, 'src/text/pad.js'), 'utf8');
    expect(source).toContain("import 'is-odd';\nimport 'kind-of';\n");
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('stops after three failing installs and hands off failed with npm’s error', () => {
    const { run } = drivePad((command) => (command === INSTALL ? 'exit code: 1\n\nnpm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/is-odd\n' : null));
    expect(run.executed.filter((each) => each.call.name === 'run_command')).toHaveLength(3);
    expect(run.executed.some((each) => each.call.name === 'write_file' || each.call.name === 'merge_to_main')).toBe(false);
    expect(run.handoff).toMatchObject({ status: 'failed', evidence: expect.stringContaining('404 Not Found') });
  });

  it('declares them in package.json with npm pkg set when npm cannot reach the registry, and goes on with the setup colony makes for it', () => {
    const declare = "npm pkg set 'dependencies[is-odd]=3.0.1' 'dependencies[kind-of]=6.0.3'";
    const { dir, run, commands } = drivePad((command, folder) => {
      if (command === INSTALL) return 'exit code: 1\n\nnpm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/is-odd failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\n';
      if (command !== declare) return null;
      // What colony does before the next command: the workspace gets the packages package.json names.
      installInto(folder);
      return 'exit code: 0\n';
    });
    expect(commands.slice(0, 2)).toEqual([INSTALL, declare]);
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
  });
});
