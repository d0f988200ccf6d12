import { describe, expect, it } from 'vitest';
import type { Message } from '../../model/messages.js';
import { compact, keepCounts, stateOf } from '../testing/compaction.js';
import type { FakeHandoff, FakeTask, PlannerSession } from '../testing/planner-tools.js';
import {
  createPlannerSession,
  failingTests,
  goalWith,
  PASSING_TESTS,
  PLANNER_TOOL_NAMES,
  range,
  testNameFor,
} from '../testing/planner-tools.js';
import { REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING } from '../../protocol/message-openings.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { simTurn } from '../sim-turn.js';

const paths = [...range('src/a/a', 10), ...range('src/b/b', 4)];

function answerOf(messages: readonly Message[]): { text: string; toolCalls: unknown } {
  const answer = simTurn(messages, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
  return { text: answer.text, toolCalls: answer.toolCalls };
}

/** Every kind of handoff in turn: done, failed with notes, synthetic, and a sub-planner that did not land two modules. */
function handoffFor(task: FakeTask, count: number): FakeHandoff {
  if (task.kind === 'planner') {
    return { status: 'partial', summary: 'Two modules did not land.', notes: ['not landed: src/a/a3.js', 'not landed: src/a/a7.js'] };
  }
  if (count % 5 === 1) {
    return { status: 'failed', summary: 'The tests failed.', notes: ['Files I changed: x.js.', 'first note', 'second note', 'third note'], concerns: ['a', 'b', 'c'] };
  }
  if (count % 7 === 3) return { status: 'failed', summary: 'The agent ended without a handoff.', synthetic: true };
  return { status: 'done', summary: `Built ${task.title}.` };
}

/**
 * Runs a planner through a goal with a delegate, retries, a synthetic handoff, a failing run on
 * main, a message from the user and both reminders, calling `beforeTurn` before each answer.
 */
function drivePlanner(beforeTurn: (session: PlannerSession, turn: number) => void): PlannerSession {
  let runs = 0;
  const runCommand = (): string => (runs++ === 0 ? failingTests([testNameFor('src/b/b1.js'), 'someone else broke this']) : PASSING_TESTS);
  const session = createPlannerSession({ brief: goalWith(paths), runCommand });
  let handed = 0;
  for (let turn = 0; turn < 120; turn += 1) {
    if (turn === 2) session.tell('Please keep the modules small.');
    if (turn === 4) session.messages.push({ role: 'user', content: `${SCRATCHPAD_REMINDER_OPENING} you have not rewritten your scratchpad for a while.` });
    if (turn === 6) session.messages.push({ role: 'user', content: `${REFLECTION_REMINDER_OPENING} check your work against your goal.` });
    beforeTurn(session, turn);
    const answer = session.turn();
    if (answer.toolCalls.length > 0) {
      if (session.openTasks().length === 0 && answer.toolCalls.every((call) => call.name === 'finish')) break;
      continue;
    }
    const next = session.openTasks()[0];
    if (next === undefined) break;
    session.handOff(next.id, handoffFor(next, handed++));
  }
  return session;
}

describe('a compacted planner conversation', () => {
  it('gives the same next answer, compacted once and twice, at every turn of a real run', () => {
    let checked = 0;
    const session = drivePlanner(({ messages }) => {
      const expected = answerOf(messages);
      for (const keep of keepCounts(messages.length)) {
        const once = compact(messages, keep);
        expect(once.toolCalls).toBe(0);
        expect(answerOf(once.compacted)).toEqual(expected);
        for (const again of keepCounts(once.compacted.length).filter((count) => count <= once.compacted.length - 3)) {
          const twice = compact(once.compacted, again);
          expect(twice.request[2]).toEqual(once.compacted[2]);
          expect(answerOf(twice.compacted)).toEqual(expected);
          checked += 1;
        }
      }
    });
    // The run went through everything the ledger carries.
    expect(session.finishes.at(-1)).toMatchObject({ status: 'done' });
    expect(session.tasks.some((task) => task.retryOf !== null)).toBe(true);
    expect(session.tasks.some((task) => task.title.startsWith('Fix '))).toBe(true);
    expect(session.tasks.filter((task) => task.kind === 'planner')).toHaveLength(1);
    expect(session.tasks.filter((task) => task.title === 'Build src/a/a3.js')).not.toHaveLength(0);
    expect(session.messages.some((message) => message.role === 'user' && message.content.includes('written by colony'))).toBe(true);
    expect(checked).toBeGreaterThan(500);
  });

  it('runs to the same end when compacted every few turns as when never compacted', () => {
    const plain = drivePlanner(() => undefined);
    const compacted = drivePlanner((session, turn) => {
      if (turn % 3 !== 2 || session.messages.length < 8) return;
      const { compacted: shorter } = compact(session.messages, 3);
      session.messages.splice(0, session.messages.length, ...shorter);
    });
    const answers = (session: PlannerSession): Message[] => session.messages.filter((message) => message.role === 'assistant');
    expect(compacted.tasks).toEqual(plain.tasks);
    expect(compacted.finishes).toEqual(plain.finishes);
    expect(answers(compacted).at(-1)).toEqual(answers(plain).at(-1));
    expect(compacted.messages.length).toBeLessThan(plain.messages.length / 3);
  });

  it('summarises in words a person can read, and says nothing that reads as a notice or a handoff', () => {
    const session = createPlannerSession({ brief: goalWith(paths) });
    session.turn();
    session.handOff('task_2', { status: 'done', summary: 'Built it.' });
    const { summary, compacted } = compact(session.messages, 0);
    const lines = summary.split('\n');
    expect(lines[0]).toBe('Goal: the goal: 14 modules under src/, as the colony-spec in the first message lists them.');
    expect(lines[1]).toBe('Done: 1 of 14 landed; 5 tasks published, 1 handed off.');
    expect(lines[2]).toBe('In flight: 4 tasks (task_1, task_3, task_4, task_5).');
    expect(lines[3]).toBe('Open threads: none.');
    expect(lines[4]).toMatch(/^Next step: Waiting for 4 handoffs/);
    expect(stateOf(summary)).toMatchObject({ role: 'planner', turn: 1, events: 7 });
    expect(summary).not.toMatch(/^(Handoff from task|Budget used up:|Message from the user:)/m);
    expect(answerOf(compacted).text).toMatch(/^Waiting for 4 handoffs/);
  });
});

describe('the planner state of a large goal', () => {
  it('stays a few dozen characters a task for 600 tasks, far smaller than what it replaces', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 600)) });
    let turns = 0;
    while (session.openTasks().length < 600 && turns < 20) {
      session.turn();
      turns += 1;
    }
    expect(turns).toBe(15);
    for (const [index, task] of session.openTasks().entries()) {
      session.handOff(task.id, index % 50 === 7 ? { status: 'failed', summary: 'It broke.', notes: ['a note'] } : { status: 'done', summary: 'Built it.' });
    }
    const expected = answerOf(session.messages);
    const { summary, compacted } = compact(session.messages, 0);
    const state = JSON.stringify(stateOf(summary));
    expect(state.length / 600).toBeLessThan(50);
    const before = session.messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    expect(summary.length).toBeLessThan(before / 20);
    expect(answerOf(compacted)).toEqual(expected);
    expect(expected.toolCalls).toHaveLength(13);
  });
});
