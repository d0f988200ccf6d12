import { describe, expect, it } from 'vitest';
import type { Message } from '../../model/messages.js';
import { BUDGET_USED_UP_HEADER } from '../../protocol/message-openings.js';
import { compact, keepCounts, stateOf } from '../testing/compaction.js';
import type { FakeTask, PlannerSession } from '../testing/planner-tools.js';
import {
  createPlannerSession,
  goalWith,
  PLANNER_TOOL_NAMES,
  range,
  releaseRefusedError,
  subPlannerBrief,
  testNameFor,
} from '../testing/planner-tools.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { simTurn } from '../sim-turn.js';

const paths = range('src/text/t', 3);
const goal = goalWith(paths);
const t0 = testNameFor('src/text/t0.js');
const t1 = testNameFor('src/text/t1.js');
const t2 = testNameFor('src/text/t2.js');
const UNRELATED = "not ok - slugify('A b')";

function newTasks(session: PlannerSession, run: () => void): FakeTask[] {
  const before = session.tasks.length;
  run();
  return session.tasks.slice(before);
}

function handOffOpen(session: PlannerSession): void {
  for (const task of session.openTasks()) session.handOff(task.id, { status: 'done', summary: `${task.title}: done.` });
}

function fixTasks(session: PlannerSession): FakeTask[] {
  return session.tasks.filter((task) => task.title.startsWith('Fix '));
}

describe('simPlannerTurn: fix-up messages from the green check', () => {
  it('turns a landed module into one Fix task, and the same message again while it is open publishes nothing more', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_2', { status: 'done', summary: 'Built t1.' });
    session.fixUp([`not ok - ${t1}`], 'task_2');
    let answer = session.turn();
    const [fix, ...others] = session.tasks.slice(3);
    expect(others).toEqual([]);
    expect(fix).toMatchObject({ kind: 'worker', title: 'Fix src/text/t1.js: its tests fail on main', retryOf: null, acceptance: ['node --test'] });
    expect(fix?.brief).toContain(`Failing on main:\n- ${t1}`);
    expect(fix?.brief).toContain(`- main's green check failed: ${t1}`);
    expect(answer.text).toMatch(new RegExp(`^colony says main is red \\(not ok - ${escape(t1)}\\): that is src/text/t1\\.js, which I will have fixed\\. Replanning: creating 1 task\\.`));
    expect(answer.text).not.toContain('Noted your message');

    session.fixUp([`not ok - ${t1}`], 'task_2');
    answer = session.turn();
    expect(session.tasks).toHaveLength(4);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toContain('Waiting for 3 handoffs');

    handOffOpen(session);
    session.turn();
    session.turn();
    expect(session.commands).toEqual(['node --test']);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['done']);
    expect(fixTasks(session)).toHaveLength(1);
  });

  it('keeps a failure of a module whose task is still open pending, and publishes the Fix task when that task lands', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.fixUp([`✖ ${t2} (1.5ms)`], 'task_3');
    expect(newTasks(session, () => session.turn())).toEqual([]);
    session.handOff('task_1', { status: 'done', summary: 'Built t0.' });
    expect(newTasks(session, () => session.turn())).toEqual([]);
    session.handOff('task_3', { status: 'done', summary: 'Built t2.' });
    const [fix, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(fix).toMatchObject({ title: 'Fix src/text/t2.js: its tests fail on main' });
    expect(fix?.brief).toContain(`Failing on main:\n- ${t2}`);
  });

  it('forgets a pending failure when the open task does not land: its retry builds the module anew', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.fixUp([`not ok - ${t0}`], 'task_1');
    session.turn();
    session.handOff('task_1', { status: 'failed', summary: 'It broke.' });
    const [retry] = newTasks(session, () => session.turn());
    expect(retry).toMatchObject({ title: 'Build src/text/t0.js', retryOf: 'task_1' });
    session.handOff(retry?.id ?? '', { status: 'done', summary: 'Built t0.' });
    handOffOpen(session);
    expect(newTasks(session, () => session.turn())).toEqual([]);
    expect(fixTasks(session)).toEqual([]);
  });

  it('changes nothing for a message naming tests of none of its modules, and says so', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    handOffOpen(session);
    session.fixUp([UNRELATED, 'Error: Cannot find module ./gone.js'], 'task_9');
    const answer = session.turn();
    expect(answer.text).toMatch(
      /^colony says main is red \(not ok - slugify\('A b'\)\), but none of those failures is in my modules; it does not change my plan\. Nothing is open/,
    );
    expect(answer.toolCalls.map((call) => call.name)).toEqual(['run_command']);
    expect(session.tasks).toHaveLength(3);
  });

  it('as the planner of a delegated slice, fixes a module its sub-planner landed', () => {
    const session = createPlannerSession({ brief: goalWith([...range('src/a/a', 9), 'src/b/b0.js']) });
    session.turn();
    const delegated = session.tasks.find((task) => task.kind === 'planner');
    expect(delegated?.scope).toBe('src/a/');
    handOffOpen(session);
    session.fixUp([`not ok 4 - ${testNameFor('src/a/a5.js')}`], 'task_77');
    const [fix, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(fix).toMatchObject({ kind: 'worker', title: 'Fix src/a/a5.js: its tests fail on main' });
  });
});

describe('simPlannerTurn: a finish refused while the release check fails', () => {
  it('publishes Fix tasks for the modules the failures name, tests main again and finishes again', () => {
    let refusals = 0;
    const refuseFinish = (): string | null => (refusals++ === 0 ? releaseRefusedError([`not ok 3 - ${t0}`, UNRELATED]) : null);
    const session = createPlannerSession({ brief: goal, refuseFinish });
    session.turn();
    handOffOpen(session);
    session.turn();
    session.turn();
    expect(session.refusedFinishes.map((finish) => finish.status)).toEqual(['done']);
    const [fix, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(fix).toMatchObject({ title: 'Fix src/text/t0.js: its tests fail on main', acceptance: ['node --test'] });
    expect(fix?.brief).toContain(`- main's release check failed when I finished: ${t0}`);
    handOffOpen(session);
    expect(session.turn().toolCalls.map((call) => call.name)).toEqual(['run_command']);
    session.turn();
    expect(session.commands).toEqual(['node --test', 'node --test']);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['done']);
  });

  it('finishes failed, quoting the first failure, when the failures name none of its modules', () => {
    const session = createPlannerSession({ brief: goal, refuseFinish: (args) => (args.status === 'done' ? releaseRefusedError([UNRELATED, '✖ other()']) : null) });
    session.turn();
    handOffOpen(session);
    session.turn();
    session.turn();
    const answer = session.turn();
    expect(answer.text).toBe(
      "colony refused my finish: main's release check fails (not ok - slugify('A b')), and nothing I can fix explains it; finishing as failed.",
    );
    expect(session.refusedFinishes).toHaveLength(1);
    expect(session.finishes).toHaveLength(1);
    const [finish] = session.finishes;
    expect(finish?.status).toBe('failed');
    expect(String(finish?.summary)).toMatch(/^main's release check fails \(not ok - slugify\('A b'\)\) and none of its failures is in a module of the goal, so the run cannot end done\. 3 of 3 modules/);
    expect(finish?.concerns).toEqual([
      "colony refused my done finish: main's release check fails: not ok - slugify('A b')",
      "Failing on main, not from any module of the goal: not ok - slugify('A b'); ✖ other()",
    ]);
    expect(session.commands).toEqual(['node --test']);
    expect(session.tasks).toHaveLength(3);
  });

  it('finishes failed when the refusal names no failure at all', () => {
    const session = createPlannerSession({ brief: goal, refuseFinish: (args) => (args.status === 'done' ? releaseRefusedError([]) : null) });
    session.turn();
    handOffOpen(session);
    for (let turn = 0; turn < 4 && session.finishes.length === 0; turn += 1) session.turn();
    expect(session.finishes[0]).toMatchObject({ status: 'failed' });
    expect(String(session.finishes[0]?.summary)).toContain("main's release check fails (no failure lines given) and it named no failing test");
  });

  it('finishes partial, not done, when its budget is used up right after a refusal', () => {
    const session = createPlannerSession({ brief: goal, refuseFinish: (args) => (args.status === 'done' ? releaseRefusedError([UNRELATED]) : null) });
    session.turn();
    handOffOpen(session);
    session.turn();
    session.turn();
    session.messages.push({ role: 'user', content: `${BUDGET_USED_UP_HEADER} the run's token budget was used up. This is your last model call.` });
    session.turn();
    expect(session.refusedFinishes).toHaveLength(1);
    expect(session.finishes).toHaveLength(1);
    expect(session.finishes[0]).toMatchObject({ status: 'partial', concerns: [`colony refused my done finish: main's release check fails: ${UNRELATED}`] });
  });

  it('tries finishing done again after a late handoff, and fails on the same refusal then', () => {
    const session = createPlannerSession({ brief: goal, refuseFinish: (args) => (args.status === 'done' ? releaseRefusedError([UNRELATED]) : null) });
    session.turn();
    handOffOpen(session);
    for (let turn = 0; turn < 4 && session.finishes.length === 0; turn += 1) session.turn();
    session.handOff('task_42', { status: 'done', summary: 'A change from elsewhere.' });
    session.turn();
    session.turn();
    session.turn();
    expect(session.refusedFinishes).toHaveLength(2);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['failed', 'failed']);
  });
});

describe('fix-up messages and refused finishes across a compaction', () => {
  /** A run with a fix-up for a landed and an open module, a repeated one, and a refused finish naming a module and something else. */
  function driveGreenRun(beforeTurn: (session: PlannerSession, turn: number) => void): PlannerSession {
    let refusals = 0;
    const refuseFinish = (): string | null => (refusals++ === 0 ? releaseRefusedError([`not ok - ${t1}`, UNRELATED]) : null);
    const session = createPlannerSession({ brief: goal, refuseFinish });
    for (let turn = 0; turn < 40 && session.finishes.length === 0; turn += 1) {
      if (turn === 1) session.handOff('task_1', { status: 'done', summary: 'Built t0.' });
      if (turn === 2) session.fixUp([`not ok - ${t0}`, `not ok - ${t2}`, UNRELATED], 'task_1');
      if (turn === 4) session.fixUp([`not ok - ${t0}`, `not ok - ${t2}`, UNRELATED], 'task_1');
      if (turn > 5) handOffOpen(session);
      beforeTurn(session, turn);
      session.turn();
    }
    return session;
  }

  function answerOf(messages: readonly Message[]): { text: string; toolCalls: unknown } {
    const answer = simTurn(messages, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    return { text: answer.text, toolCalls: answer.toolCalls };
  }

  it('gives the same next answer, compacted once and twice, at every turn', () => {
    let checked = 0;
    const session = driveGreenRun(({ messages }) => {
      const expected = answerOf(messages);
      for (const keep of keepCounts(messages.length)) {
        const once = compact(messages, keep);
        expect(answerOf(once.compacted)).toEqual(expected);
        for (const again of keepCounts(once.compacted.length).filter((count) => count <= once.compacted.length - 3)) {
          expect(answerOf(compact(once.compacted, again).compacted)).toEqual(expected);
          checked += 1;
        }
      }
    });
    expect(fixTasks(session).map((task) => task.title)).toEqual([
      'Fix src/text/t0.js: its tests fail on main',
      'Fix src/text/t2.js: its tests fail on main',
      'Fix src/text/t1.js: its tests fail on main',
    ]);
    expect(session.refusedFinishes).toHaveLength(1);
    expect(session.finishes.map((finish) => finish.status)).toEqual(['done']);
    expect(checked).toBeGreaterThan(50);
  });

  it('runs to the same end when compacted every other turn', () => {
    const plain = driveGreenRun(() => undefined);
    const compacted = driveGreenRun((session, turn) => {
      if (turn % 2 !== 1 || session.messages.length < 6) return;
      session.messages.splice(0, session.messages.length, ...compact(session.messages, 1).compacted);
    });
    expect(compacted.tasks).toEqual(plain.tasks);
    expect(compacted.finishes).toEqual(plain.finishes);
  });

  it('carries a pending failure, a refusal and a fix-up still to acknowledge in its state', () => {
    const session = createPlannerSession({ brief: goal, refuseFinish: () => releaseRefusedError([UNRELATED]) });
    session.turn();
    session.fixUp([`not ok - ${t2}`], 'task_3');
    const pending = stateOf(compact(session.messages, 0).summary);
    expect(pending).toMatchObject({ unansweredGreen: [[`not ok - ${t2}`]], ledger: { pending: [[2, [t2]]], releaseRefusal: null } });
    for (let turn = 0; turn < 6 && session.refusedFinishes.length === 0; turn += 1) {
      handOffOpen(session);
      session.turn();
    }
    expect(fixTasks(session).map((task) => task.title)).toEqual(['Fix src/text/t2.js: its tests fail on main']);
    const refused = stateOf(compact(session.messages, 0).summary);
    expect(refused).toMatchObject({ unansweredGreen: [], ledger: { pending: [], releaseRefusal: { failures: [UNRELATED], unmapped: [UNRELATED] } } });
  });
});

describe('a sub-planner and the green check', () => {
  it('maps failure lines to the modules of its own scope only', () => {
    const session = createPlannerSession({ brief: subPlannerBrief('src/text/', goal) });
    session.turn();
    handOffOpen(session);
    session.fixUp([`not ok - ${t0}`, UNRELATED], 'task_1');
    const [fix, ...others] = newTasks(session, () => session.turn());
    expect(others).toEqual([]);
    expect(fix?.title).toBe('Fix src/text/t0.js: its tests fail on main');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
