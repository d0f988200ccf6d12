import { describe, expect, it } from 'vitest';
import { MAX_PUBLISH_CALLS_PER_ANSWER } from './planner-next-step.js';
import { compact } from '../testing/compaction.js';
import { createPlannerSession, CUT_OFF_ANSWER, goalWith, range } from '../testing/planner-tools.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { publishBoundText } from '../../orchestrator/roles/planner/planner-board.js';

function callNames(answer: { toolCalls: readonly { name: string }[] }): string[] {
  return answer.toolCalls.map((call) => call.name);
}

describe('the sim planner publishing a large goal', () => {
  it('publishes 600 modules in one folder 40 at a time, in 15 answers in a row, without waiting for handoffs', () => {
    expect(MAX_PUBLISH_CALLS_PER_ANSWER).toBe(40);
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 600)) });
    const published: number[] = [];
    for (let turn = 0; turn < 15; turn += 1) {
      const answer = session.turn();
      expect(callNames(answer)).toEqual(['write_scratchpad', ...Array<string>(40).fill('create_task')]);
      published.push(session.tasks.length);
    }
    expect(published).toEqual(Array.from({ length: 15 }, (_, turn) => (turn + 1) * 40));
    expect(session.tasks.map((task) => task.title)).toEqual(range('src/lib/m', 600).map((path) => `Build ${path}`));
    expect(session.tasks.every((task) => task.kind === 'worker')).toBe(true);
    const scratchpads = session.messages.flatMap((message) =>
      message.role === 'assistant' ? message.toolCalls.filter((call) => call.name === 'write_scratchpad') : [],
    );
    expect(scratchpads[0]?.input).toContain('40 calls to publish now and 560 in the next answers');
    expect(scratchpads[14]?.input).toContain('40 calls to publish now, 0 given up');
    const waiting = session.turn();
    expect(callNames(waiting)).toEqual([]);
    expect(waiting.text).toMatch(/^Waiting for 600 handoffs .* and 588 more\)/);
  });

  it('sends retries beyond the cap in the next answer too', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 45)) });
    expect(callNames(session.turn()).filter((name) => name === 'create_task')).toHaveLength(40);
    expect(callNames(session.turn()).filter((name) => name === 'create_task')).toHaveLength(5);
    for (const task of session.openTasks()) session.handOff(task.id, { status: 'failed', summary: 'The tests failed.' });
    const first = session.turn();
    expect(callNames(first).filter((name) => name === 'create_task')).toHaveLength(40);
    const second = session.turn();
    expect(callNames(second).filter((name) => name === 'create_task')).toHaveLength(5);
    expect(session.tasks.slice(45).map((task) => task.retryOf)).toEqual(session.tasks.slice(0, 45).map((task) => task.id));
    expect(callNames(session.turn())).toEqual([]);
  });

  it("keeps within colony's bound once refused for it: the refused tasks go out in the next answers, none given up", () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 30)), publishBound: { bound: 8, refusal: publishBoundText(8) } });
    const first = session.turn();
    expect(callNames(first).filter((name) => name === 'create_task')).toHaveLength(30);
    expect(session.tasks).toHaveLength(8);
    const later = [session.turn(), session.turn(), session.turn()].map((answer) => callNames(answer).filter((name) => name === 'create_task').length);
    expect(later).toEqual([8, 8, 6]);
    expect(session.tasks.map((task) => task.title)).toEqual(range('src/lib/m', 30).map((path) => `Build ${path}`));
    expect(callNames(session.turn())).toEqual([]);
  });

  it('gives a module up at once when colony refuses another retry of it, without sending it again', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 1)) });
    session.turn();
    const [task] = session.openTasks();
    if (task === undefined) throw new Error('no task');
    session.handOff(task.id, { status: 'failed', summary: 'The tests failed.' });
    const retry = session.turn();
    expect(callNames(retry)).toContain('create_task');
    // colony refuses it: the chain holds as many attempts as it takes.
    const last = session.messages.at(-1);
    if (last?.role !== 'tool') throw new Error('no result');
    session.messages[session.messages.length - 1] = { ...last, content: 'error: Not retried: this task has been tried 6 times (task_1 failed); colony takes no more retries of it as it is.', isError: true };
    session.tasks.pop();
    const after = session.turn();
    expect(callNames(after).filter((name) => name === 'create_task')).toEqual([]);
  });
});

describe('the sim planner after an answer cut off at the output limit', () => {
  const created = (answer: { toolCalls: readonly { name: string }[] }): number => callNames(answer).filter((name) => name === 'create_task').length;
  const cutShort = (session: ReturnType<typeof createPlannerSession>): number =>
    session.messages.filter((message) => message.role === 'tool' && message.content === CUT_OFF_ANSWER).length;

  it('publishes no more at once than got through before the cut, and so every module in answers that fit', () => {
    // Twelve tasks take about 2,400 tokens in one answer; 1,000 holds four of them.
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 12)), maxOutputTokens: 1_000 });
    const first = session.turn();
    expect(cutShort(session)).toBe(1);
    expect(created(first)).toBe(5);
    expect(session.tasks).toHaveLength(4);
    const later = [session.turn(), session.turn()];
    expect(later.map(created)).toEqual([4, 4]);
    expect(cutShort(session)).toBe(1);
    expect(session.tasks.map((task) => task.title)).toEqual(range('src/lib/m', 12).map((path) => `Build ${path}`));
    expect(callNames(session.turn())).toEqual([]);
  });

  it('keeps the smaller number after a summary', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 12)), maxOutputTokens: 1_000 });
    session.turn();
    const { compacted } = compact(session.messages, 0, DEFAULT_SIM_OPTIONS);
    session.messages.splice(0, session.messages.length, ...compacted);
    expect(created(session.turn())).toBe(4);
    expect(cutShort(session)).toBe(0);
  });

  it('publishes as many as before when no answer was cut', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 12)), maxOutputTokens: 64_000 });
    expect(created(session.turn())).toBe(12);
    expect(cutShort(session)).toBe(0);
  });
});
