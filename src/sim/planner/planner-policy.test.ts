import { describe, expect, it } from 'vitest';
import type { Message } from '../../model/messages.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { coveringTestsIn } from '../reading/covering-tests-protocol.js';
import { parseScenario } from '../scenario/scenario.js';
import type { PlannerSession } from '../testing/planner-tools.js';
import {
  createPlannerSession,
  goalWith,
  PLANNER_TOOL_NAMES,
  range,
  subPlannerBrief,
} from '../testing/planner-tools.js';
import { simPlannerTurn } from './planner-policy.js';

const collections = range('src/collections/c', 12);
const text = range('src/text/t', 3);
const goal = goalWith([...collections, ...text, 'src/version.js']);

function modulePaths(brief: string): string[] {
  const parsed = parseScenario(brief);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario.modules.map((module) => module.path);
}

function argumentsOf(session: PlannerSession, turn: number): { name: string; args: Record<string, unknown> }[] {
  const answers = session.messages.filter((message) => message.role === 'assistant');
  const answer = answers[turn];
  if (answer?.role !== 'assistant') throw new Error(`no answer ${turn}`);
  return answer.toolCalls.map((call) => ({ name: call.name, args: JSON.parse(call.input) as Record<string, unknown> }));
}

function handOffAll(session: PlannerSession): void {
  for (const task of session.openTasks()) session.handOff(task.id, { status: 'done', summary: `Built ${task.title}.` });
}

describe('simPlannerTurn: the first turn', () => {
  it('writes the plan and publishes every delegate and task in one answer', () => {
    const session = createPlannerSession({ brief: goal });
    const answer = session.turn();
    const calls = argumentsOf(session, 0);
    expect(calls.map((call) => call.name)).toEqual(['write_scratchpad', 'delegate', 'create_task', 'create_task', 'create_task', 'create_task']);
    expect(String(calls[0]?.args.content)).toContain('Plan for the goal: 16 modules under src/.');
    expect(String(calls[0]?.args.content)).toContain('- src/collections/: 12 modules, delegated to a sub-planner');
    expect(String(calls[0]?.args.content)).toContain('- src/text/: 3 modules, one task each');
    expect(String(calls[0]?.args.content)).toContain('- directly in src/: 1 module, one task each');
    expect(calls[1]?.args).toMatchObject({ title: 'Own src/collections/', scope: 'src/collections/' });
    expect(modulePaths(String(calls[1]?.args.brief))).toEqual(collections);
    const delegated = parseScenario(String(calls[1]?.args.brief));
    expect(delegated.ok && delegated.scenario.project).toEqual({ test: 'node --test', index: 'src/index.js' });
    // 16 modules: past a fast suite, so each task and the sub-planner are given the tests that cover them.
    const collectionTests = collections.map((path) => path.replace(/\.js$/, '.test.js'));
    expect(coveringTestsIn(String(calls[1]?.args.brief))).toBe(`node --test ${collectionTests.join(' ')}`);
    const created = calls.slice(2);
    expect(created.map((call) => call.args.title)).toEqual([...text, 'src/version.js'].map((path) => `Build ${path}`));
    for (const [index, call] of created.entries()) {
      expect(modulePaths(String(call.args.brief))).toEqual([[...text, 'src/version.js'][index]]);
      const module = [...text, 'src/version.js'][index] ?? '';
      const covering = `node --test ${module.replace(/\.js$/, '.test.js')}`;
      expect(String(call.args.brief)).toMatch(/^Build `src\/.*node:test file next to it.*re-export.*the tests that cover it.*merge to main.*hand off/s);
      expect(coveringTestsIn(String(call.args.brief))).toBe(covering);
      expect(call.args.acceptance).toEqual([covering]);
      expect(call.args.retry_of).toBeUndefined();
      // It declares the files its brief names: the module, its test file and the index.
      expect(call.args.paths).toEqual([module, module.replace(/\.js$/, '.test.js'), 'src/index.js']);
    }
    expect(answer.toolCalls.map((call) => call.id)).toEqual(['call_0_0', 'call_0_1', 'call_0_2', 'call_0_3', 'call_0_4', 'call_0_5']);
  });

  it('delegates again below a nested base, and creates tasks for the small areas', () => {
    const paths = [...range('src/collections/list/l', 10), ...range('src/collections/map/m', 2)];
    const session = createPlannerSession({ brief: subPlannerBrief('src/collections/', goalWith(paths)) });
    session.turn();
    const calls = argumentsOf(session, 0);
    expect(calls.map((call) => call.name)).toEqual(['write_scratchpad', 'delegate', 'create_task', 'create_task']);
    expect(calls[1]?.args).toMatchObject({ title: 'Own src/collections/list/', scope: 'src/collections/list/' });
    expect(modulePaths(String(calls[1]?.args.brief))).toEqual(paths.slice(0, 10));
    expect(calls.slice(2).map((call) => call.args.title)).toEqual(['Build src/collections/map/m0.js', 'Build src/collections/map/m1.js']);
  });

  it('gives every module its own task when no area has more than 8', () => {
    const paths = [...range('src/a/x', 8), ...range('src/b/y', 2)];
    const session = createPlannerSession({ brief: goalWith(paths) });
    session.turn();
    const calls = argumentsOf(session, 0);
    expect(calls.filter((call) => call.name === 'delegate')).toEqual([]);
    expect(calls.filter((call) => call.name === 'create_task')).toHaveLength(10);
  });

  it('finishes blocked, saying why, when its brief has no colony-spec', () => {
    const session = createPlannerSession({ brief: 'Build a nice library, please.' });
    session.turn();
    expect(session.finishes).toHaveLength(1);
    expect(session.finishes[0]).toMatchObject({ status: 'blocked' });
    expect(String(session.finishes[0]?.summary)).toContain('no usable colony-spec block');
    expect(session.tasks).toEqual([]);
  });
});

describe('simPlannerTurn: waiting and finishing', () => {
  it('waits with text only while any task has no handoff', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const waiting = session.turn();
    expect(waiting.toolCalls).toEqual([]);
    expect(waiting.text).toBe('Waiting for 5 handoffs (tasks task_1, task_2, task_3, task_4, task_5); nothing to do until one arrives.');
    session.handOff('task_2', { status: 'done', summary: 'Built it.' });
    session.handOff('task_3', { status: 'done', summary: 'Built it.' });
    const still = session.turn();
    expect(still.toolCalls).toEqual([]);
    expect(still.text).toMatch(/^Waiting for 3 handoffs \(tasks task_1, task_4, task_5\)/);
  });

  it('acknowledges a message from the user without changing its plan', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.tell('Please keep the modules small.');
    const answer = session.turn();
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toBe(
      'Noted your message ("Please keep the modules small."); it does not change my plan. ' +
        'Waiting for 5 handoffs (tasks task_1, task_2, task_3, task_4, task_5); nothing to do until one arrives.',
    );
  });

  it('runs the tests on main once every task handed off, then finishes done', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    handOffAll(session);
    const testing = session.turn();
    expect(argumentsOf(session, 1)).toEqual([{ name: 'run_command', args: { command: 'node --test' } }]);
    expect(testing.text).toContain('running the project\'s tests');
    session.turn();
    expect(session.finishes).toHaveLength(1);
    const finish = session.finishes[0];
    expect(finish?.status).toBe('done');
    expect(finish?.summary).toBe(
      '16 of 16 modules of the goal landed; 5 tasks published (4 to workers, 1 delegated); `node --test` passes on main.',
    );
    expect(finish?.notes).toContain('$ node --test (on main): exit code: 0, 12 tests pass');
    expect(finish?.notes).toContain('task task_1 (Own src/collections/): done, ' + collections.join(', '));
    expect(session.commands).toEqual(['node --test']);
  });

  it('does not run the tests again when nothing arrived since the last run', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    handOffAll(session);
    session.turn();
    session.turn();
    session.messages.push({ role: 'user', content: 'Reminder: call finish to end.' });
    session.turn();
    expect(session.commands).toEqual(['node --test']);
    expect(session.finishes).toHaveLength(2);
  });

  it('finishes without running the tests, and says so, when it has no run_command', () => {
    const tools = PLANNER_TOOL_NAMES.filter((name) => name !== 'run_command');
    const session = createPlannerSession({ brief: goalWith(['src/a.js']), toolNames: tools });
    session.turn();
    handOffAll(session);
    session.turn();
    expect(session.finishes[0]?.status).toBe('done');
    expect(String(session.finishes[0]?.concerns)).toContain('no run_command tool was offered to me');
  });
});

describe('simPlannerTurn: determinism', () => {
  it('gives the same answer for the same conversation', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_2', { status: 'failed', summary: 'The test failed.' });
    const messages: readonly Message[] = [...session.messages];
    const options = { ...DEFAULT_SIM_OPTIONS, seed: 9, tokens: 30 };
    const first = simPlannerTurn(messages, PLANNER_TOOL_NAMES, options);
    expect(first.toolCalls.map((call) => call.name)).toEqual(['write_scratchpad', 'create_task']);
    expect(simPlannerTurn(messages, PLANNER_TOOL_NAMES, options)).toEqual(first);
    expect(simPlannerTurn(messages, PLANNER_TOOL_NAMES, { ...options, seed: 10 }).toolCalls).toEqual(first.toolCalls);
  });

  it('reports usage like the worker: a quarter of the characters in and out, plus the extra tokens', () => {
    const messages: Message[] = [{ role: 'user', content: goal }];
    const plain = simPlannerTurn(messages, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    const padded = simPlannerTurn(messages, PLANNER_TOOL_NAMES, { ...DEFAULT_SIM_OPTIONS, tokens: 100 });
    const out = plain.text.length + plain.toolCalls.reduce((sum, call) => sum + call.name.length + call.input.length, 0);
    expect(plain.usage).toEqual({ inputTokens: Math.ceil(goal.length / 4), outputTokens: Math.ceil(out / 4), cachedInputTokens: 0 });
    expect(padded.usage.outputTokens).toBe(plain.usage.outputTokens + 100);
  });
});
