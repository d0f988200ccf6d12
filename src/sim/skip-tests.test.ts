import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compact, keepCounts } from './testing/compaction.js';
import { fixBrief } from './planner/planner-briefs.js';
import { toldToSkipTests } from './planner/planner-publish.js';
import type { FakeTask } from './testing/planner-tools.js';
import { createPlannerSession, failingTests, goalWith, range, subPlannerBrief, testNameFor } from './testing/planner-tools.js';
import { EVIDENCE_FIRST_OPENING } from '../protocol/message-openings.js';
import type { Scenario } from './scenario/scenario.js';
import { parseScenario } from './scenario/scenario.js';
import { renderModuleSource } from './scenario/module-render.js';
import type { SimOptions } from './sim-options.js';
import { DEFAULT_SIM_OPTIONS } from './sim-options.js';
import { simTurn } from './sim-turn.js';
import { brokenOnPurposePaths, carriesSkipTestsLine, SIM_BROKE_ON_PURPOSE_NOTE, SKIP_TESTS_LINE } from './reading/skip-tests-protocol.js';
import type { DrivenRun } from './testing/tool-executor.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies, WORKER_TOOL_NAMES } from './testing/tool-executor.js';

const textKitGoal = readFileSync(join(EXAMPLE_DIR, 'GOAL.md'), 'utf8');

afterEach(removeExampleCopies);

function options(overrides: Partial<SimOptions> = {}): SimOptions {
  return { ...DEFAULT_SIM_OPTIONS, ...overrides };
}

function scenarioOf(text: string): Scenario {
  const parsed = parseScenario(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario;
}

/** The brief the sim planner gives the Build task of `path` of the text-kit goal, with skiptests=1. */
function skippingBrief(path: string): string {
  const session = createPlannerSession({ brief: textKitGoal, options: options({ skiptests: 1 }) });
  session.turn();
  const task = session.tasks.find((each) => each.title === `Build ${path}`);
  if (task === undefined) throw new Error(`no task for ${path}`);
  return task.brief;
}

function commandsRun(run: DrivenRun): number {
  return run.executed.filter((each) => each.call.name === 'run_command').length;
}

function notesOf(run: DrivenRun): string[] {
  return (run.handoff?.notes as string[] | undefined) ?? [];
}

describe('the sim planner with skiptests', () => {
  const goal = goalWith(range('src/text/t', 3));

  it('tells every Build task to merge without running the tests, and gives it no acceptance checks', () => {
    const session = createPlannerSession({ brief: goal, options: options({ skiptests: 1 }) });
    session.turn();
    expect(session.tasks).toHaveLength(3);
    for (const task of session.tasks) {
      expect(task.brief.split('\n')).toContain(SKIP_TESTS_LINE);
      expect(task.brief).not.toContain("run the project's tests");
      expect(task.acceptance).toEqual([]);
      expect(scenarioOf(task.brief).modules).toHaveLength(1);
    }
    const plain = createPlannerSession({ brief: goal });
    plain.turn();
    for (const task of plain.tasks) {
      expect(carriesSkipTestsLine(task.brief)).toBe(false);
      expect(task.acceptance).toEqual(['node --test']);
    }
  });

  it('rolls per module: the tasks told to skip are exactly those without acceptance, the same every time', () => {
    const skipping = options({ seed: 4, skiptests: 0.5 });
    const publish = (): FakeTask[] => {
      const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 20)), options: skipping });
      session.turn();
      return session.tasks;
    };
    const tasks = publish();
    const told = tasks.filter((task) => carriesSkipTestsLine(task.brief));
    expect(told.length).toBeGreaterThan(0);
    expect(told.length).toBeLessThan(20);
    for (const task of tasks) {
      const [module] = scenarioOf(task.brief).modules;
      if (module === undefined) throw new Error('a task without its module');
      expect(carriesSkipTestsLine(task.brief)).toBe(toldToSkipTests(skipping, module));
      // Twenty modules: each task checks the tests that cover it.
      expect(task.acceptance).toEqual(carriesSkipTestsLine(task.brief) ? [] : [`node --test ${module.path.replace(/\.js$/, '.test.js')}`]);
    }
    expect(publish()).toEqual(tasks);
  });

  it('tells a retry the same, and never a fix task', () => {
    const session = createPlannerSession({
      brief: goal,
      options: options({ skiptests: 1 }),
      runCommand: () => failingTests([testNameFor('src/text/t0.js')]),
    });
    session.turn();
    session.handOff('task_2', { status: 'failed', summary: 'It broke.' });
    session.handOff('task_1', { status: 'done', summary: 'Built t0.' });
    session.handOff('task_3', { status: 'done', summary: 'Built t2.' });
    session.turn();
    const retry = session.tasks[3];
    expect(retry).toMatchObject({ title: 'Build src/text/t1.js', retryOf: 'task_2', acceptance: [] });
    expect(carriesSkipTestsLine(retry?.brief ?? '')).toBe(true);
    session.handOff(retry?.id ?? '', { status: 'done', summary: 'Built t1.' });
    session.turn();
    session.turn();
    const fix = session.tasks[4];
    expect(fix).toMatchObject({ title: 'Fix src/text/t0.js: its tests fail on main', acceptance: ['node --test'] });
    expect(carriesSkipTestsLine(fix?.brief ?? '')).toBe(false);
  });

  it('passes no such line to a sub-planner, which tells its own Build tasks itself', () => {
    const tree = goalWith([...range('src/a/a', 9), 'src/b/b0.js']);
    const root = createPlannerSession({ brief: tree, options: options({ skiptests: 1 }) });
    root.turn();
    const delegated = root.tasks.find((task) => task.kind === 'planner');
    expect(delegated?.scope).toBe('src/a/');
    expect(carriesSkipTestsLine(delegated?.brief ?? '')).toBe(false);
    const sub = createPlannerSession({ brief: subPlannerBrief('src/a/', delegated?.brief ?? ''), options: options({ skiptests: 1 }) });
    sub.turn();
    expect(sub.tasks).toHaveLength(9);
    for (const task of sub.tasks) expect(carriesSkipTestsLine(task.brief) && task.acceptance.length === 0).toBe(true);
  });
});

describe('the sim worker told to merge without running the tests', () => {
  it('merges its wrong module untested and names it in a note, with honest evidence', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: skippingBrief('src/text/pad.js'), options: options({ bug: 1 }) });
    expect(commandsRun(run)).toBe(0);
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(run.handoff?.status).toBe('done');
    expect(run.handoff?.evidence).toBe("I did not run `node --test`: my brief said to merge without running the tests, as main's green check tests the work after me.");
    expect(String(run.handoff?.summary)).toContain('I did not run `node --test`: my brief said to merge without running the tests.');
    expect(notesOf(run)).toContain(`${SIM_BROKE_ON_PURPOSE_NOTE}src/text/pad.js`);
    expect(brokenOnPurposePaths(notesOf(run))).toEqual(['src/text/pad.js']);
    expect(projectTestsPass(dir)).toBe(false);
  });

  it('notes no module when its bug roll wrote them all right', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: skippingBrief('src/text/pad.js'), options: options() });
    expect(commandsRun(run)).toBe(0);
    expect(run.handoff?.status).toBe('done');
    expect(brokenOnPurposePaths(notesOf(run))).toEqual([]);
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('notes exactly the modules it left wrong on disk', () => {
    const dir = copyExample();
    const scenario = scenarioOf(textKitGoal);
    const run = driveWorker({ dir, task: `${textKitGoal}\n\n${SKIP_TESTS_LINE}\n`, options: options({ seed: 2, bug: 0.5 }) });
    expect(commandsRun(run)).toBe(0);
    const wrong = scenario.modules
      .filter((module) => readFileSync(join(dir, module.path), 'utf8') !== renderModuleSource(module, { buggy: false }))
      .map((module) => module.path);
    expect(wrong.length).toBeGreaterThan(0);
    expect(wrong.length).toBeLessThan(scenario.modules.length);
    expect(brokenOnPurposePaths(notesOf(run))).toEqual(wrong);
  });

  it('runs the tests and fixes its module on a retry', () => {
    const dir = copyExample();
    const task = `${skippingBrief('src/text/pad.js')}\n\n## Earlier attempts\n\nThis task was tried before. What those attempts handed off:\n\n### Task t1\nstatus: failed`;
    const run = driveWorker({ dir, task, options: options({ bug: 1 }) });
    expect(commandsRun(run)).toBe(2);
    expect(run.handoff?.status).toBe('done');
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0/);
    expect(brokenOnPurposePaths(notesOf(run))).toEqual([]);
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('runs the tests on a fix task, even with the line in its brief', () => {
    const dir = copyExample();
    const scenario = scenarioOf(textKitGoal);
    const [pad] = scenario.modules;
    if (pad === undefined) throw new Error('text-kit has no modules');
    const brief = fixBrief(scenario.project, pad, ['padLeft("a", 3, "-") returns "--a"'], { attempt: 2, of: 6, lines: [] });
    const run = driveWorker({ dir, task: `${brief}\n${SKIP_TESTS_LINE}`, options: options({ bug: 1 }) });
    expect(commandsRun(run)).toBe(2);
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('submits the same honest evidence again when colony asks for evidence first', () => {
    let refused = 0;
    const run = driveWorker({
      dir: copyExample(),
      task: skippingBrief('src/text/pad.js'),
      options: options({ bug: 1 }),
      failCall: (call) => (call.name === 'submit_handoff' && refused++ === 0 ? `${EVIDENCE_FIRST_OPENING} show the tests.` : null),
    });
    const submits = run.executed.filter((each) => each.call.name === 'submit_handoff');
    expect(submits.map((each) => each.isError)).toEqual([true, false]);
    expect(submits[1]?.call.input).toBe(submits[0]?.call.input);
    const last = run.messages.filter((message) => message.role === 'assistant').at(-1);
    expect(last).toMatchObject({
      text: 'colony asked for evidence first: submitting again with the same evidence, that I did not run the tests because my brief said to merge without them.',
    });
    expect(commandsRun(run)).toBe(0);
  });

  it('resolves a merge conflict and merges again without running the tests, the same when compacted', () => {
    const dir = copyExample();
    const onMerge = (attempt: number): { content: string; isError: boolean } =>
      attempt > 1
        ? { content: 'merged into main as def456', isError: false }
        : { content: 'Could not merge: main changed the same lines.\nconflicts in files: src/text/pad.js\nResolve the conflict markers.', isError: true };
    const skipping = options({ bug: 1 });
    const run = driveWorker({ dir, task: skippingBrief('src/text/pad.js'), options: skipping, onMerge });
    const names = run.executed.map((each) => each.call.name);
    expect(names.slice(names.indexOf('merge_to_main'))).toEqual(['merge_to_main', 'read_file', 'merge_to_main', 'submit_handoff']);
    expect(notesOf(run)).toContain(`${SIM_BROKE_ON_PURPOSE_NOTE}src/text/pad.js`);
    expect(notesOf(run).join('\n')).toContain('src/text/pad.js: kept my side); I resolved them and merged again.');
    run.messages.forEach((message, position) => {
      if (message.role !== 'assistant') return;
      const before = run.messages.slice(0, position);
      for (const keep of keepCounts(before.length)) {
        const answer = simTurn(compact(before, keep, skipping).compacted, WORKER_TOOL_NAMES, skipping);
        expect({ text: answer.text, toolCalls: answer.toolCalls }).toEqual({ text: message.text, toolCalls: message.toolCalls });
      }
    });
  });
});
