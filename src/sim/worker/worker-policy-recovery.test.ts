import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/scenario.js';
import { renderModuleSource, renderModuleTest, testPathFor } from '../scenario/module-render.js';
import type { SimOptions } from '../sim-options.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies } from '../testing/tool-executor.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const chunkTask = readFileSync(join(EXAMPLE_DIR, 'tasks/04-chunk.md'), 'utf8');

afterEach(removeExampleCopies);

function options(overrides: Partial<SimOptions> = {}): SimOptions {
  return { ...DEFAULT_SIM_OPTIONS, ...overrides };
}

describe('simWorkerTurn when things go wrong', () => {
  it('resolves a conflict in the index to the union of both sides, main first', () => {
    const dir = copyExample();
    const chunk = parseScenario(chunkTask);
    if (!chunk.ok) throw new Error(chunk.error);
    const onMerge = (attempt: number): { content: string; isError: boolean } => {
      if (attempt > 1) return { content: 'merged into main as def456', isError: false };
      // What a real merge leaves behind: main's new module, and markers where both sides appended.
      for (const module of chunk.scenario.modules) {
        mkdirSync(dirname(join(dir, module.path)), { recursive: true });
        writeFileSync(join(dir, module.path), renderModuleSource(module, { buggy: false }));
        writeFileSync(join(dir, testPathFor(module.path)), renderModuleTest(module));
      }
      const [comment] = readFileSync(join(dir, 'src/index.js'), 'utf8').split('\n');
      writeFileSync(
        join(dir, 'src/index.js'),
        [comment, '<<<<<<< main', "export * from './list/chunk.js';", '=======', "export * from './text/pad.js';", '>>>>>>> worker', ''].join('\n'),
      );
      return {
        content: 'Could not merge: main changed the same lines.\nconflicts in files: src/index.js\nResolve the conflict markers and call merge_to_main again.',
        isError: true,
      };
    };
    const run = driveWorker({ dir, task: padTask, options: options(), onMerge });
    expect(run.handoff?.status).toBe('done');
    const [comment, ...rest] = readFileSync(join(dir, 'src/index.js'), 'utf8').split('\n');
    expect(comment?.startsWith('//')).toBe(true);
    expect(rest).toEqual(["export * from './list/chunk.js';", "export * from './text/pad.js';", '']);
    expect(projectTestsPass(dir)).toBe(true);
    const names = run.executed.map((each) => each.call.name);
    const conflictAt = names.indexOf('merge_to_main');
    expect(names.slice(conflictAt + 1)).toEqual(['read_file', 'write_file', 'run_command', 'merge_to_main', 'submit_handoff']);
    expect((run.handoff?.notes as string[]).join('\n')).toContain("src/index.js: kept both sides' lines");
  });


  it('hands off blocked, changing nothing, when the task has no colony-spec', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: 'Please make the library nicer.', options: options() });
    expect(run.turns).toBe(1);
    expect(run.handoff?.status).toBe('blocked');
    expect(String(run.handoff?.evidence)).toContain('no colony-spec block');
    expect(String(run.handoff?.evidence)).toContain('```colony-spec');
  });


  it('retries a step that failed with a tool error, and gives up with a failed handoff when it keeps failing', () => {
    let failures = 0;
    const flaky = driveWorker({
      dir: copyExample(),
      task: padTask,
      options: options(),
      failCall: (call, args) => (call.name === 'write_file' && args.path === 'src/text/pad.js' && failures++ === 0 ? 'disk full' : null),
    });
    expect(flaky.handoff?.status).toBe('done');
    expect(flaky.executed.filter((each) => each.call.name === 'write_file' && each.call.input.includes('"src/text/pad.js"'))).toHaveLength(2);

    const broken = driveWorker({
      dir: copyExample(),
      task: padTask,
      options: options(),
      failCall: (call) => (call.name === 'edit_file' ? 'the file system is read-only' : null),
    });
    expect(broken.handoff?.status).toBe('failed');
    expect(String(broken.handoff?.concerns)).toContain('the file system is read-only');
  });


  it('hands off failed with the output tail, unmerged, when its own tests fail for a reason it cannot fix', () => {
    const dir = copyExample();
    writeFileSync(join(dir, 'src/broken.test.js'), "import { test } from 'node:test';\ntest('padLeft(\"x\") was broken by someone', () => { throw new Error('boom'); });\n");
    const run = driveWorker({ dir, task: padTask, options: options() });
    expect(run.handoff?.status).toBe('failed');
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 1\n[\s\S]*# fail 1/);
    expect(String(run.handoff?.concerns)).toContain('padLeft("x") was broken by someone');
    expect(run.executed.some((each) => each.call.name === 'merge_to_main')).toBe(false);
  });


  it('merges its own right work and says what fails outside its task when only other tests fail', () => {
    const dir = copyExample();
    writeFileSync(join(dir, 'src/broken.test.js'), "import { test } from 'node:test';\ntest('someone else broke this', () => { throw new Error('boom'); });\n");
    const run = driveWorker({ dir, task: padTask, options: options({ bug: 1 }) });
    // Its own wrong first attempt is fixed first; only then is what fails someone else's.
    expect(run.executed.filter((each) => each.call.name === 'write_file' && each.call.input.includes('"src/text/pad.js"'))).toHaveLength(2);
    expect(run.handoff?.status).toBe('done');
    expect(String(run.handoff?.summary)).toContain('fails in tests outside this task');
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 1\n/);
    expect(String(run.handoff?.concerns)).toContain('Tests outside this task fail on main: someone else broke this');
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
  });


  it('writes the index when it does not exist yet', () => {
    const dir = copyExample();
    rmSync(join(dir, 'src/index.js'));
    const run = driveWorker({ dir, task: padTask, options: options() });
    expect(run.handoff?.status).toBe('done');
    expect(readFileSync(join(dir, 'src/index.js'), 'utf8')).toBe("export * from './text/pad.js';\n");
  });


  it('makes do without the optional tools, and hands off blocked without the ones it needs', () => {
    const dir = copyExample();
    const bare = ['read_file', 'write_file', 'run_command', 'submit_handoff'];
    const run = driveWorker({ dir, task: padTask, options: options(), toolNames: bare });
    expect(run.handoff?.status).toBe('done');
    expect(run.handoff?.deviations).toEqual(['Not merged into main: the merge_to_main tool was not offered to me.']);
    expect(new Set(run.executed.map((each) => each.call.name))).toEqual(new Set(bare));
    expect(readFileSync(join(dir, 'src/index.js'), 'utf8')).toMatch(/^\/\/ text-kit.*\nexport \* from '\.\/text\/pad\.js';\n$/);

    const blocked = driveWorker({ dir: copyExample(), task: padTask, options: options(), toolNames: ['read_file', 'submit_handoff'] });
    expect(blocked.handoff?.status).toBe('blocked');
    expect(String(blocked.handoff?.summary)).toContain('without the write_file, run_command tools');
  });


  it('hands off done when main already has the work', () => {
    const run = driveWorker({
      dir: copyExample(),
      task: chunkTask,
      options: options(),
      onMerge: () => ({ content: 'nothing to merge: main already has these changes', isError: false }),
    });
    expect(run.handoff?.status).toBe('done');
    expect(String(run.handoff?.summary)).toContain('main already had all of it');
  });

});
