import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { coveringTestsIn } from '../reading/covering-tests-protocol.js';
import { createPlannerSession, goalWith, range, subPlannerBrief, type PlannerSession } from '../testing/planner-tools.js';
import { FAST_SUITE_MODULES } from './planner-publish.js';

const testOf = (path: string): string => path.replace(/\.js$/, '.test.js');

function finishAll(session: PlannerSession): void {
  for (const task of session.openTasks()) session.handOff(task.id, { status: 'done', summary: `Built ${task.title}.` });
  session.turn();
  session.turn();
}

describe('the tests the sim planner gives a task', () => {
  it('are the whole suite on a project small enough for it to be fast, and the root checks main with it', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', FAST_SUITE_MODULES)) });
    session.turn();
    expect(session.tasks).toHaveLength(FAST_SUITE_MODULES);
    for (const task of session.tasks) {
      expect(task.acceptance).toEqual(['node --test']);
      expect(coveringTestsIn(task.brief)).toBeNull();
    }
    finishAll(session);
    expect(session.commands).toEqual(['node --test']);
  });

  it('are those that cover it on a larger one; main is still checked whole by the root before it finishes', () => {
    const paths = range('src/lib/m', FAST_SUITE_MODULES + 1);
    const session = createPlannerSession({ brief: goalWith(paths) });
    session.turn();
    expect(session.tasks.map((task) => task.acceptance)).toEqual(paths.map((path) => [`node --test ${testOf(path)}`]));
    expect(session.tasks.map((task) => coveringTestsIn(task.brief))).toEqual(paths.map((path) => `node --test ${testOf(path)}`));
    finishAll(session);
    expect(session.commands).toEqual(['node --test']);
  });

  it('are, for a sub-planner told its area’s tests, each module’s, and it checks main with its area’s tests only', () => {
    const paths = range('src/area/a', 4);
    const area = `node --test ${paths.map(testOf).join(' ')}`;
    const brief = subPlannerBrief('src/area/', `${goalWith(paths)}\nTests that cover this change: \`${area}\``);
    const session = createPlannerSession({ brief });
    session.turn();
    expect(session.tasks.map((task) => task.acceptance)).toEqual(paths.map((path) => [`node --test ${testOf(path)}`]));
    finishAll(session);
    expect(session.commands).toEqual([area]);
    expect(String(session.finishes[0]?.summary)).toContain(`\`${area}\` passes on main`);
  });

  it('leave out of a sub-planner’s check of main the test files of modules that did not land, which main does not have', () => {
    const paths = range('src/area/a', 2);
    const brief = subPlannerBrief('src/area/', `${goalWith(paths)}\nTests that cover this change: \`node --test ${paths.map(testOf).join(' ')}\``);
    const session = createPlannerSession({ brief });
    session.turn();
    // The second module fails every attempt and is given up; the first lands.
    for (let answer = 0; answer < 10 && session.finishes.length === 0; answer += 1) {
      for (const task of session.openTasks()) {
        const lands = task.brief.includes(`\`${paths[0]}\``);
        session.handOff(task.id, lands ? { status: 'done', summary: 'Built it.' } : { status: 'failed', summary: 'It broke.' });
      }
      session.turn();
    }
    expect(session.commands).toEqual([`node --test ${testOf(paths[0] ?? '')}`]);
    expect(session.finishes[0]?.status).toBe('partial');
  });

  it('are the whole suite everywhere with the wholesuite habit, as planners gave before tests were scoped', () => {
    const paths = range('src/lib/m', FAST_SUITE_MODULES + 1);
    const session = createPlannerSession({ brief: goalWith(paths), options: { ...DEFAULT_SIM_OPTIONS, wholesuite: 1 } });
    session.turn();
    for (const task of session.tasks) {
      expect(task.acceptance).toEqual(['node --test']);
      expect(coveringTestsIn(task.brief)).toBeNull();
    }
  });
});
