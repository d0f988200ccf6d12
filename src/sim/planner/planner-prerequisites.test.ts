import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { createPlannerSession, goalWith, type PlannerSession } from '../testing/planner-tools.js';

/** src/a.js; src/b.js uses it; src/c.js uses src/b.js. */
const CHAIN = goalWith(['src/a.js', 'src/b.js', 'src/c.js'], { 'src/b.js': ['src/a.js'], 'src/c.js': ['src/b.js'] });

const titles = (session: PlannerSession): string[] => session.tasks.map((task) => task.title);

function handOffOpen(session: PlannerSession, status: (title: string) => 'done' | 'blocked' | 'failed'): void {
  for (const task of session.openTasks()) session.handOff(task.id, { status: status(task.title), summary: `${task.title}: ${status(task.title)}.` });
}

describe('the sim planner and modules that use others', () => {
  it('publishes a module once the modules it uses landed, in waves, and finishes done', () => {
    const session = createPlannerSession({ brief: CHAIN });
    session.turn();
    expect(titles(session)).toEqual(['Build src/a.js']);
    // The brief of a later wave names what it imports and what to do if it is not on main.
    handOffOpen(session, () => 'done');
    session.turn();
    expect(titles(session)).toEqual(['Build src/a.js', 'Build src/b.js']);
    expect(session.tasks[1]?.brief).toContain('It imports `src/a.js`, which other tasks build: if one is not on main when you start, do not write it or stub it; hand off blocked, naming it.');
    handOffOpen(session, () => 'done');
    session.turn();
    expect(titles(session)).toEqual(['Build src/a.js', 'Build src/b.js', 'Build src/c.js']);
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.finishes).toEqual([expect.objectContaining({ status: 'done' })]);
  });

  it('with the dependent habit publishes everything at once; a task blocked on a missing module is retried only once that module landed', () => {
    const session = createPlannerSession({ brief: CHAIN, options: { ...DEFAULT_SIM_OPTIONS, dependent: 1 } });
    session.turn();
    expect(titles(session)).toEqual(['Build src/a.js', 'Build src/b.js', 'Build src/c.js']);
    // b's and c's workers find what they import missing and hand off blocked; a is still at work.
    for (const task of session.openTasks().filter((each) => each.title !== 'Build src/a.js')) session.handOff(task.id, { status: 'blocked', summary: 'What it imports is not on main yet.' });
    session.turn();
    expect(titles(session)).toHaveLength(3);
    handOffOpen(session, () => 'done');
    session.turn();
    const retried = session.tasks.slice(3);
    expect(retried.map((task) => [task.title, task.retryOf])).toEqual([['Build src/b.js', session.tasks[1]?.id]]);
    handOffOpen(session, () => 'done');
    session.turn();
    expect(session.tasks.slice(4).map((task) => [task.title, task.retryOf])).toEqual([['Build src/c.js', session.tasks[2]?.id]]);
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.finishes).toEqual([expect.objectContaining({ status: 'done' })]);
  });

  it('gives up the modules that use one it gave up, without publishing them, and says so', () => {
    const session = createPlannerSession({ brief: CHAIN });
    for (let answer = 0; answer < 20 && session.finishes.length === 0; answer += 1) {
      session.turn();
      handOffOpen(session, () => 'failed');
    }
    expect(new Set(titles(session))).toEqual(new Set(['Build src/a.js']));
    expect(session.finishes).toHaveLength(1);
    expect(session.finishes[0]?.status).not.toBe('done');
    expect(JSON.stringify(session.finishes[0])).toContain('src/c.js');
  });
});
