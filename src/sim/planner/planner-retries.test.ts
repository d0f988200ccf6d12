import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/scenario.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import type { FakeTask, PlannerSession } from '../testing/planner-tools.js';
import {
  createPlannerSession,
  failingTests,
  goalWith,
  PASSING_TESTS,
  range,
  subPlannerBrief,
  testNameFor,
} from '../testing/planner-tools.js';

const text = range('src/text/t', 3);
const goal = goalWith(text);

function modulesOf(task: FakeTask | undefined): unknown {
  const parsed = parseScenario(task?.brief ?? '');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario.modules;
}

function newTasks(session: PlannerSession, run: () => void): FakeTask[] {
  const before = session.tasks.length;
  run();
  return session.tasks.slice(before);
}

function handOffOpen(session: PlannerSession, status: (task: FakeTask) => 'done' | 'failed'): void {
  for (const task of session.openTasks()) session.handOff(task.id, { status: status(task), summary: `${task.title}: ${status(task)}.` });
}

describe('simPlannerTurn: the republish habit', () => {
  /** colony's refusal of a failed task's brief published again (planner-board.ts), for `id`. */
  const republishRefusal = (id: string) => `Not published: this brief is task ${id}'s ("Build src/text/t1.js"), which ended failed. To try that work again, publish it with retry_of: ${id} and say in the brief what this attempt should do differently.`;

  it('publishes a failed first attempt again as it was, without retry_of; refused for it, retries it with retry_of and what went wrong', () => {
    // Refuses a brief of a failed task published again without retry_of, once, as colony does.
    const failed = new Map<string, string>();
    const session = createPlannerSession({
      brief: goal,
      options: { ...DEFAULT_SIM_OPTIONS, republish: 1 },
      refusePublish: (_name, args) => {
        const id = typeof args.retry_of === 'string' ? null : failed.get(String(args.brief));
        if (id === undefined || id === null) return null;
        failed.delete(String(args.brief));
        return republishRefusal(id);
      },
    });
    session.turn();
    const first = session.tasks[1];
    failed.set(first?.brief ?? '', 'task_2');
    session.handOff('task_2', { status: 'failed', summary: '`node --test` still fails after 3 failing runs.' });
    const answer = session.turn();
    const republished = answer.toolCalls.filter((call) => call.name === 'create_task').map((call) => JSON.parse(call.input) as Record<string, unknown>);
    expect(republished).toEqual([{ title: 'Build src/text/t1.js', brief: first?.brief, paths: expect.any(Array) as unknown, acceptance: ['node --test'] }]);
    expect(session.tasks).toHaveLength(3);
    const [retry, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(retry).toMatchObject({ kind: 'worker', title: 'Build src/text/t1.js', retryOf: 'task_2' });
    expect(retry?.brief).toContain('- task task_2 ended failed: `node --test` still fails after 3 failing runs.');
    expect(retry?.brief).not.toContain('Not published');
  });

  it('sends the brief again only after a first attempt that was not done, and never without the knob', () => {
    for (const republish of [0, 1]) {
      const session = createPlannerSession({ brief: goal, options: { ...DEFAULT_SIM_OPTIONS, republish } });
      session.turn();
      session.handOff('task_2', { status: 'failed', summary: 'It broke.' });
      const [next] = newTasks(session, () => session.turn());
      expect(next?.retryOf).toBe(republish === 1 ? null : 'task_2');
      // Taken as a new task, it is this module's second attempt: its failure is retried with retry_of.
      session.handOff(next?.id ?? '', { status: 'failed', summary: 'It broke again.' });
      const [after] = newTasks(session, () => session.turn());
      expect(after?.retryOf).toBe(next?.id);
    }
  });
});

describe('simPlannerTurn: retries', () => {
  it('retries a failed worker task with retry_of, the same module, and what went wrong', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_2', {
      status: 'failed',
      summary: '`node --test` still fails after 3 failing runs.',
      notes: ['Files I changed: src/text/t1.js, src/text/t1.test.js.'],
    });
    const [retry, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(retry).toMatchObject({ kind: 'worker', title: 'Build src/text/t1.js', retryOf: 'task_2' });
    expect(modulesOf(retry)).toEqual(modulesOf(session.tasks[1]));
    expect(retry?.brief).toContain('This is attempt 2 of 6. What happened before:');
    expect(retry?.brief).toContain('- task task_2 ended failed: `node --test` still fails after 3 failing runs.');
    expect(retry?.brief).toContain('- Files I changed: src/text/t1.js, src/text/t1.test.js.');
    expect(session.turn().text).toMatch(/^Waiting for 3 handoffs \(tasks task_1, task_3, task_4\)/);
  });

  it("gives every worker task the project's test command as its acceptance, retries included", () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_2', { status: 'failed', summary: 'It broke.' });
    session.turn();
    expect(session.tasks.map((task) => task.acceptance)).toEqual([['node --test'], ['node --test'], ['node --test'], ['node --test']]);
    expect(session.tasks.at(-1)?.retryOf).toBe('task_2');
  });

  it('retries a task that claimed done but whose acceptance checks failed on main, and not one whose checks passed', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_1', { status: 'done', summary: 'Built t0.', acceptance: 'passed at 1a2b3c4d5e6f\n- `node --test`: passed' });
    session.handOff('task_2', {
      status: 'done',
      summary: 'Built t1. `node --test` passes (3 tests).',
      acceptance: ['claimed done, checks failed at 0f0e0d0c0b0a', '- `node --test`: failed with exit code 1', '    ✖ srcTextT1(1) returns 2'].join('\n'),
    });
    session.handOff('task_3', { status: 'done', summary: 'Built t2.', acceptance: 'not run: nothing landed' });
    const [retry, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(retry).toMatchObject({ kind: 'worker', title: 'Build src/text/t1.js', retryOf: 'task_2', acceptance: ['node --test'] });
    expect(retry?.brief).toContain(
      '- task task_2 ended done, but its acceptance checks failed on main (claimed done, checks failed at 0f0e0d0c0b0a): Built t1.',
    );
    session.handOff(retry?.id ?? '', { status: 'done', summary: 'Fixed t1.', acceptance: 'passed at 9a9b9c9d9e9f' });
    session.turn();
    expect(session.commands).toEqual(['node --test']);
    expect(session.turn().toolCalls.map((call) => call.name)).toContain('finish');
  });

  it("does not retry a task whose checks failed only as main already did, unless the failures are its own module's tests", () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const onlyMains = (failure: string): string =>
      ['claimed done, checks failed at 0f0e0d0c0b0a', '- `node --test`: failed with exit code 1', "  1 of its failures already failed on main before this merge (not this task's; the green loop's fix-up owns it); none is new.", `    ✖ ${failure}`].join('\n');
    // t1's worker merged while t0's test was failing on main: not its doing.
    session.handOff('task_2', { status: 'done', summary: 'Built t1; t0 fails on main, not mine.', acceptance: onlyMains('srcTextT0(1) returns 1') });
    // t2's own test failed before and still fails: its work did not make it pass.
    session.handOff('task_3', { status: 'done', summary: 'Built t2.', acceptance: onlyMains('srcTextT2(1) returns 1') });
    const retries = newTasks(session, () => session.turn());
    expect(retries.map((task) => [task.title, task.retryOf])).toEqual([['Build src/text/t2.js', 'task_3']]);
  });

  it('gives a module up after 6 attempts and finishes partial with a not-landed note', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const failing = (task: FakeTask): 'done' | 'failed' => (task.title === 'Build src/text/t2.js' ? 'failed' : 'done');
    for (let turn = 0; turn < 20 && session.finishes.length === 0; turn += 1) {
      handOffOpen(session, failing);
      session.turn();
    }
    const attempts = session.tasks.filter((task) => task.title === 'Build src/text/t2.js');
    expect(attempts).toHaveLength(6);
    expect(attempts.map((task) => task.retryOf)).toEqual([null, 'task_3', 'task_4', 'task_5', 'task_6', 'task_7']);
    expect(session.commands).toEqual(['node --test']);
    const finish = session.finishes[0];
    expect(finish?.status).toBe('partial');
    expect(finish?.notes).toContain('not landed: src/text/t2.js');
    expect(String(finish?.summary)).toMatch(/^2 of 3 modules of the goal landed, 1 given up; 8 tasks published \(8 to workers, 0 delegated\)/);
    expect(String(finish?.concerns)).toContain('src/text/t2.js did not land after 6 attempts; the last: task task_8 ended failed');
  });
});

describe('simPlannerTurn: the tests on main', () => {
  it('publishes a fix task for each module whose tests fail on main, then tests again', () => {
    let report = failingTests([testNameFor('src/text/t1.js')]);
    const session = createPlannerSession({ brief: goal, runCommand: () => report });
    session.turn();
    handOffOpen(session, () => 'done');
    session.turn();
    const [fix, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(fix).toMatchObject({ kind: 'worker', title: 'Fix src/text/t1.js: its tests fail on main', retryOf: null });
    expect(modulesOf(fix)).toEqual(modulesOf(session.tasks[1]));
    expect(fix?.brief).toContain(`Failing on main:\n- ${testNameFor('src/text/t1.js')}`);
    expect(fix?.brief).toContain('This is attempt 2 of 6.');
    report = PASSING_TESTS;
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.commands).toEqual(['node --test', 'node --test']);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['done']);
  });

  it('counts fix tasks as attempts and gives up on a module whose tests keep failing', () => {
    let report = failingTests([testNameFor('src/text/t0.js')]);
    const session = createPlannerSession({ brief: goal, runCommand: () => report });
    for (let turn = 0; turn < 30 && session.finishes.length === 0; turn += 1) {
      handOffOpen(session, () => 'done');
      session.turn();
    }
    expect(session.tasks.filter((task) => task.title.startsWith('Fix src/text/t0.js'))).toHaveLength(5);
    expect(session.finishes[0]).toMatchObject({ status: 'partial' });
    expect(session.finishes[0]?.notes).toContain('not landed: src/text/t0.js');
    // Someone else's change fixes main; the late handoff makes it test again and see that.
    report = PASSING_TESTS;
    session.handOff('task_40', { status: 'done', summary: 'Fixed a shared helper.' });
    session.turn();
    session.turn();
    expect(session.tasks.filter((task) => task.title.startsWith('Fix src/text/t0.js'))).toHaveLength(5);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['partial', 'done']);
  });

  it('as the root, fails naming the failing tests it cannot map to a module', () => {
    const session = createPlannerSession({ brief: goal, runCommand: () => failingTests(['slugify("A B") returns "a-b"']) });
    session.turn();
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.tasks).toHaveLength(3);
    expect(session.finishes[0]?.status).toBe('failed');
    expect(session.finishes[0]?.concerns).toContain('Failing on main, not from any module of the goal: slugify("A B") returns "a-b"');
  });

  it('as a sub-planner, finishes done with a concern when every failing test is outside its scope', () => {
    const brief = subPlannerBrief('src/text/', goal);
    const session = createPlannerSession({ brief, runCommand: () => failingTests(['slugify("A B") returns "a-b"']) });
    session.turn();
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.finishes[0]?.status).toBe('done');
    expect(session.finishes[0]?.concerns).toContain('Failing on main, not from any module of `src/text/`: slugify("A B") returns "a-b"');
  });
});

describe('simPlannerTurn: after finish', () => {
  it('a late handoff leads to a new evaluation: the tests run again and it finishes again', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    expect(session.finishes).toHaveLength(1);
    session.handOff('task_9', { status: 'done', summary: 'A change from elsewhere.' });
    const answer = session.turn();
    expect(answer.toolCalls.map((call) => call.name)).toEqual(['run_command']);
    session.turn();
    expect(session.commands).toEqual(['node --test', 'node --test']);
    expect(session.finishes).toHaveLength(2);
  });

  it('a late failed handoff of one of its tasks is retried before it finishes again', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    handOffOpen(session, () => 'done');
    session.turn();
    session.turn();
    session.handOff('task_1', { status: 'failed', summary: 'The merge was reverted.', synthetic: true });
    const [retry] = newTasks(session, () => session.turn());
    expect(retry).toMatchObject({ title: 'Build src/text/t0.js', retryOf: 'task_1' });
  });
});
