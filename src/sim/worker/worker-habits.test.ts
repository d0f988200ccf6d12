import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies } from '../testing/tool-executor.js';
import { NOTES_FILE } from './worker-habits.js';
import type { SpecModule } from '../../spec/colony-spec.js';
import { renderModuleSource, renderModuleTest, testPathFor } from '../scenario/module-render.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');

afterEach(removeExampleCopies);

/** colony's answer to a first merge that adds notes (`stray-notes.md`, shortened). */
const NOTES_REFUSAL = `Not merged: your change adds ${NOTES_FILE}, which look like notes about your work rather than files of the project. Delete them, then call \`merge_to_main\` again.`;

describe('the notes habit', () => {
  it('writes a summary of the work with its first merge; refused for it, deletes it and merges again', () => {
    const dir = copyExample();
    const run = driveWorker({
      dir,
      task: padTask,
      options: { ...DEFAULT_SIM_OPTIONS, notes: 1 },
      onMerge: (attempt) => (attempt === 1 ? { content: NOTES_REFUSAL, isError: true } : { content: 'merged into main as abc123', isError: false }),
    });
    const names = run.executed.map((each) => each.call.name);
    const firstMerge = names.indexOf('merge_to_main');
    expect(run.executed[firstMerge - 1]?.call).toMatchObject({ name: 'write_file', input: expect.stringContaining(`"path":"${NOTES_FILE}"`) as unknown });
    expect(run.executed[firstMerge - 1]?.call.input).toContain('src/text/pad.js');
    const removal = run.executed.findIndex((each) => each.call.name === 'run_command' && each.call.input.includes(`rm -f ${NOTES_FILE}`));
    expect(removal).toBeGreaterThan(firstMerge);
    expect(names.slice(removal + 1)).toEqual(['merge_to_main', 'submit_handoff']);
    expect(existsSync(join(dir, NOTES_FILE))).toBe(false);
    expect(run.handoff?.status).toBe('done');
  });

  it('lands what colony lets through: a merge that is not refused ends the habit there', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: { ...DEFAULT_SIM_OPTIONS, notes: 1 } });
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(run.executed.some((each) => each.call.name === 'run_command' && each.call.input.includes('rm -f'))).toBe(false);
    expect(run.handoff?.status).toBe('done');
  });

  it('is off by default: no summary file is written', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS });
    expect(run.executed.some((each) => each.call.input.includes(NOTES_FILE))).toBe(false);
    expect(existsSync(join(dir, NOTES_FILE))).toBe(false);
  });
});

/** colony's answer to a merge that changes tests outside the task (`others-tests.md`, shortened). */
const TESTS_REFUSAL = "Not merged (tests outside your task): your change edits or deletes src/text/trim.test.js, tests the project already has that lie outside your task's paths. Put each back as your workspace had it (`git show HEAD:<file> > <file>`), merge again.";

describe('the testfix habit', () => {
  /** The example with another module already on main whose test fails, committed as a repository's main would have it. */
  function exampleWithFailingNeighbour(): { dir: string; testFile: string; original: string } {
    const dir = copyExample();
    const trim: SpecModule = { path: 'src/text/trim.js', exports: [{ name: 'trimBoth', params: ['text'], body: 'return text.trim();', cases: [{ args: [' a '], returns: 'a' }] }] };
    const testFile = testPathFor(trim.path);
    const original = renderModuleTest(trim);
    mkdirSync(join(dir, 'src/text'), { recursive: true });
    writeFileSync(join(dir, trim.path), renderModuleSource(trim, { buggy: true }));
    writeFileSync(join(dir, testFile), original);
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'start']]) {
      execFileSync('git', args, { cwd: dir });
    }
    return { dir, testFile, original };
  }

  it("skips another module's failing test so the suite passes; refused for it, puts it back and merges its own work with the failure named", () => {
    const { dir, testFile, original } = exampleWithFailingNeighbour();
    const run = driveWorker({
      dir,
      task: padTask,
      options: { ...DEFAULT_SIM_OPTIONS, testfix: 1 },
      onMerge: (attempt) => (attempt === 1 ? { content: TESTS_REFUSAL, isError: true } : { content: 'merged into main as abc123', isError: false }),
    });
    const calls = run.executed.map((each) => each.call);
    const skip = calls.findIndex((call) => call.name === 'edit_file' && call.input.includes('test.skip('));
    expect(calls.slice(skip - 2, skip).map((call) => call.name)).toEqual(['search', 'read_file']);
    expect(calls[skip - 1]?.input).toContain(testFile);
    const merges = calls.flatMap((call, index) => (call.name === 'merge_to_main' ? [index] : []));
    expect(merges).toHaveLength(2);
    expect(merges[0]).toBeGreaterThan(skip);
    const restore = calls.findIndex((call) => call.name === 'run_command' && call.input.includes(`git show HEAD:${testFile} > ${testFile}`));
    expect(restore).toBeGreaterThan(merges[0] ?? Infinity);
    // The tests run again after the file is back, before the merge that lands.
    expect(calls.slice(restore + 1, merges[1]).some((call) => call.name === 'run_command' && call.input.includes('node --test'))).toBe(true);
    expect(readFileSync(join(dir, testFile), 'utf8')).toBe(original);
    expect(run.handoff?.status).toBe('done');
    expect(String(run.handoff?.concerns)).toContain('trimBoth');
  });

  it('is off by default: the failing test outside the task is left as it is', () => {
    const { dir, testFile, original } = exampleWithFailingNeighbour();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS });
    expect(run.executed.some((each) => each.call.name === 'edit_file' && each.call.input.includes(testFile))).toBe(false);
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(readFileSync(join(dir, testFile), 'utf8')).toBe(original);
    expect(run.handoff?.status).toBe('done');
  });
});

describe('a task whose module uses one another task builds', () => {
  /** The pad task, its module importing src/text/trim.js. */
  const usingTask = padTask.replace('"path": "src/text/pad.js",', '"path": "src/text/pad.js",\n      "uses": ["src/text/trim.js"],');

  it('hands off blocked, naming it, when it is not on main, and writes nothing', () => {
    expect(usingTask).toContain('"uses": ["src/text/trim.js"]');
    const dir = copyExample();
    const run = driveWorker({ dir, task: usingTask, options: DEFAULT_SIM_OPTIONS });
    expect(run.executed.map((each) => each.call.name)).toEqual(['list_dir', 'read_file', 'read_file', 'submit_handoff']);
    expect(run.executed[2]?.call.input).toContain('src/text/trim.js');
    expect(run.handoff).toMatchObject({ status: 'blocked', follow_ups: ['Publish this task again once the task building src/text/trim.js landed.'] });
    expect(existsSync(join(dir, 'src/text/pad.js'))).toBe(false);
  });

  it('builds its module importing it when it is there, and the tests pass', () => {
    const dir = copyExample();
    mkdirSync(join(dir, 'src/text'), { recursive: true });
    writeFileSync(join(dir, 'src/text/trim.js'), 'export const trimmed = true;\n');
    const run = driveWorker({ dir, task: usingTask, options: DEFAULT_SIM_OPTIONS });
    expect(run.handoff?.status).toBe('done');
    expect(readFileSync(join(dir, 'src/text/pad.js'), 'utf8')).toContain("import './trim.js';");
    expect(projectTestsPass(dir)).toBe(true);
  });
});

describe('a worker whose run of the suite names no failure it can read', () => {
  /** A failing run whose failing tests were cut out of the output, as a long suite's output is. */
  const cutShort = (command: string): string | null => (command === 'node --test' ? 'exit code: 1\n\n[... 40,000 characters cut ...]\n# tests 426\n# pass 423\n# fail 3\n' : null);
  const notice = 'Main is failing already: colony\'s last check of main (`node --test` at 0123456789ab) failed before your work landed, with:\n- not ok - trimBoth(" a ") returns "a"\n- and 2 more\nThese failures are not yours unless your task is about them.';

  it("merges its own work when colony's notice says main fails already, naming main's failures", () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, answerCommand: cutShort, interject: (turn) => (turn === 0 ? notice : null) });
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(run.handoff).toMatchObject({ status: 'done', concerns: ['Tests outside this task fail on main: trimBoth(" a ") returns "a"'] });
  });

  it("hands off failed without the notice, or when the notice names its own module's tests: nothing tells it the failures are not its own", () => {
    const ownNotice = notice.replace('trimBoth(" a ") returns "a"', 'padLeft("a", 3, "-") returns "--a"');
    for (const interject of [() => null, (turn: number) => (turn === 0 ? ownNotice : null)]) {
      const dir = copyExample();
      const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, answerCommand: cutShort, interject });
      expect(run.executed.some((each) => each.call.name === 'merge_to_main')).toBe(false);
      expect(run.handoff?.status).toBe('failed');
    }
  });
});
