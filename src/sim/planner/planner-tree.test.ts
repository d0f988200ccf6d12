import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { specBlock, parseScenario } from '../scenario/scenario.js';
import type { FakeHandoff, FakeTask, PlannerSession } from '../testing/planner-tools.js';
import { createPlannerSession, goalWith, range } from '../testing/planner-tools.js';
import { runPlannerTree } from '../testing/planner-tree.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { copyExample, createToolExecutor, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies } from '../testing/tool-executor.js';

afterEach(removeExampleCopies);

const collections = range('src/collections/c', 12);
const goal = goalWith([...collections, 'src/text/t0.js']);

function modulePaths(task: FakeTask | undefined): string[] {
  const parsed = parseScenario(task?.brief ?? '');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario.modules.map((module) => module.path);
}

function newTasks(session: PlannerSession, run: () => void): FakeTask[] {
  const before = session.tasks.length;
  run();
  return session.tasks.slice(before);
}

describe('simPlannerTurn: sub-planners', () => {
  it('a sub-planner names what did not land, and its parent redoes only that', () => {
    const respond = (task: FakeTask): FakeHandoff =>
      task.title === 'Build src/collections/c3.js'
        ? { status: 'failed', summary: 'c3 keeps failing its test.' }
        : { status: 'done', summary: `${task.title}: done.` };
    const tree = runPlannerTree({ brief: goal, respond });
    const sub = tree.planners.find((run) => run.scope === 'src/collections/');
    expect(sub?.finish?.status).toBe('partial');
    expect((sub?.finish?.notes as string[]).filter((note) => note.startsWith('not landed: '))).toEqual(['not landed: src/collections/c3.js']);
    expect(sub?.session.tasks).toHaveLength(12 + 5);
    const rootTasks = tree.root.session.tasks;
    const afterSub = rootTasks.filter((task) => task.title === 'Build src/collections/c3.js');
    expect(afterSub).toHaveLength(5);
    expect(afterSub[0]?.retryOf).toBeNull();
    expect(modulePaths(afterSub[0])).toEqual(['src/collections/c3.js']);
    expect(afterSub[0]?.brief).toContain('This is attempt 2 of 6. What happened before:\n- task task_1 ended partial:');
    expect(rootTasks.filter((task) => task.kind === 'planner')).toHaveLength(1);
    expect(tree.root.finish?.status).toBe('partial');
    expect(tree.root.finish?.notes).toContain('not landed: src/collections/c3.js');
    expect(tree.workerTasks.filter((task) => task.title === 'Build src/collections/c3.js')).toHaveLength(11);
  });

  it('runs the same way twice: the same tree, the same conversations', () => {
    const respond = (task: FakeTask): FakeHandoff =>
      task.title.endsWith('c5.js') ? { status: 'failed', summary: 'no' } : { status: 'done', summary: 'yes' };
    const first = runPlannerTree({ brief: goal, respond });
    const again = runPlannerTree({ brief: goal, respond });
    expect(again.planners.map((run) => run.session.messages)).toEqual(first.planners.map((run) => run.session.messages));
    expect(first.planners).toHaveLength(2);
  });

  it('re-delegates the area when more than 8 of its modules did not land, with just those modules', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const missing = collections.slice(0, 10);
    session.handOff('task_1', {
      status: 'partial',
      summary: '2 of 12 modules of `src/collections/` landed, 10 given up.',
      notes: missing.map((path) => `not landed: ${path}`),
    });
    const [again, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(again).toMatchObject({ kind: 'planner', title: 'Own src/collections/', scope: 'src/collections/' });
    expect(modulePaths(again)).toEqual(missing);
    expect(again?.brief).toContain('- task task_1 ended partial: 2 of 12 modules of `src/collections/` landed, 10 given up.');
  });

  it('redoes every module of a sub-planner that ended without a handoff of its own', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_1', { status: 'failed', summary: 'The agent ended without a handoff.', synthetic: true });
    const [again] = newTasks(session, () => session.turn());
    expect(again?.kind).toBe('planner');
    expect(modulePaths(again)).toEqual(collections);
  });
});

describe('simPlannerTurn with sim workers', () => {
  it('builds part of the text-kit goal for real: one task per module, the tests on main, done', () => {
    const dir = copyExample();
    const fullGoal = parseScenario(readFileSync(join(EXAMPLE_DIR, 'GOAL.md'), 'utf8'));
    if (!fullGoal.ok) throw new Error(fullGoal.error);
    // Three modules in three areas keep the real test runs few.
    const modules = fullGoal.scenario.modules.filter((module) => /\/(pad|chunk|clamp)\.js$/.test(module.path));
    const goalText = `Build these text-kit modules.\n\n${specBlock(fullGoal.scenario.project, modules)}`;
    const execute = createToolExecutor(dir);
    const respond = (task: FakeTask): FakeHandoff => {
      const run = driveWorker({ dir, task: task.brief, options: DEFAULT_SIM_OPTIONS });
      const handoff = run.handoff ?? { status: 'failed', summary: 'The worker ended without a handoff.' };
      return {
        status: handoff.status === 'done' ? 'done' : 'failed',
        summary: String(handoff.summary),
        notes: Array.isArray(handoff.notes) ? handoff.notes.map(String) : [],
      };
    };
    const runCommand = (command: string): string =>
      execute({ id: 'planner_run', name: 'run_command', input: JSON.stringify({ command }) }).content;
    const tree = runPlannerTree({ brief: goalText, respond, runCommand });
    expect(tree.workerTasks.map((task) => task.title)).toEqual([
      'Build src/text/pad.js',
      'Build src/list/chunk.js',
      'Build src/number/clamp.js',
    ]);
    expect(tree.root.session.commands).toEqual(['node --test']);
    expect(tree.root.finish?.status).toBe('done');
    expect(String(tree.root.finish?.summary)).toContain('3 of 3 modules of the goal landed');
    expect(projectTestsPass(dir)).toBe(true);
  });
});
