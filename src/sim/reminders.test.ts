import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlannerSession, goalWith, PLANNER_TOOL_NAMES, range } from './testing/planner-tools.js';
import { simPlannerTurn } from './planner/planner-policy.js';
import { EVIDENCE_FIRST_OPENING, REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING } from '../protocol/message-openings.js';
import { DEFAULT_SIM_OPTIONS } from './sim-options.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies, WORKER_TOOL_NAMES } from './testing/tool-executor.js';
import { simWorkerTurn } from './worker/worker-policy.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const SCRATCHPAD = `${SCRATCHPAD_REMINDER_OPENING} you have not rewritten your scratchpad in a while; write down where you stand.`;
const REFLECTION = `${REFLECTION_REMINDER_OPENING} check your work against your goal. Pivoting is allowed.`;

afterEach(removeExampleCopies);

function names(answer: { toolCalls: readonly { name: string }[] }): string[] {
  return answer.toolCalls.map((call) => call.name);
}

describe('the sim planner and reminders', () => {
  function waitingSession(): ReturnType<typeof createPlannerSession> {
    const session = createPlannerSession({ brief: goalWith(range('src/text/t', 3)) });
    session.turn();
    return session;
  }

  it('rewrites its scratchpad once when reminded while it waits, then waits again', () => {
    const session = waitingSession();
    session.messages.push({ role: 'user', content: SCRATCHPAD });
    const answer = session.turn();
    expect(names(answer)).toEqual(['write_scratchpad']);
    const content = String((JSON.parse(answer.toolCalls[0]?.input ?? '{}') as { content: string }).content);
    expect(content).toContain('Plan for the goal: 3 modules under src/text/.');
    expect(content).toContain('Progress: 0 landed, 3 with a task, 0 calls to publish now, 0 given up.');
    expect(content).toMatch(/\nNext: Waiting for 3 handoffs \(tasks task_1, task_2, task_3\)/);
    expect(answer.text).toMatch(/^Waiting for 3 handoffs/);
    expect(names(session.turn())).toEqual([]);
  });

  it('writes one scratchpad, not two, when reminded in a turn it publishes anyway, and none without the tool', () => {
    const session = createPlannerSession({ brief: goalWith(range('src/text/t', 3)) });
    session.messages.push({ role: 'user', content: SCRATCHPAD });
    expect(names(session.turn())).toEqual(['write_scratchpad', 'create_task', 'create_task', 'create_task']);
    const bare = waitingSession();
    bare.messages.push({ role: 'user', content: SCRATCHPAD });
    const tools = PLANNER_TOOL_NAMES.filter((name) => name !== 'write_scratchpad');
    expect(names(simPlannerTurn(bare.messages, tools, DEFAULT_SIM_OPTIONS))).toEqual([]);
  });

  it('says where it stands after a reflection reminder and goes on with the same step', () => {
    const session = waitingSession();
    session.handOff('task_2', { status: 'done', summary: 'Built it.' });
    const without = simPlannerTurn(session.messages, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    session.messages.push({ role: 'user', content: REFLECTION });
    const answer = session.turn();
    expect(answer.text).toBe(`Checked my progress against the goal: 1 of 3 modules landed, 2 with a task; the plan still holds. ${without.text}`);
    expect(answer.toolCalls).toEqual(without.toolCalls);
    expect(session.turn().text).toBe(without.text);
  });
});

describe('the sim worker and reminders', () => {
  it('adds a scratchpad of what is done and what is next to the step it takes anyway', () => {
    const run = driveWorker({ dir: copyExample(), task: padTask, options: DEFAULT_SIM_OPTIONS, interject: (turn) => (turn === 3 ? SCRATCHPAD : null) });
    expect(run.handoff?.status).toBe('done');
    const position = run.messages.findIndex((message) => message.role === 'user' && message.content === SCRATCHPAD);
    const reminded = run.messages[position + 1];
    if (reminded?.role !== 'assistant') throw new Error('no answer after the reminder');
    const without = simWorkerTurn(run.messages.slice(0, position), WORKER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    expect(names(reminded)).toEqual(['write_scratchpad', ...names(without)]);
    expect(reminded.toolCalls.slice(1)).toEqual(without.toolCalls.map((call, index) => ({ ...call, id: `call_3_${index + 1}` })));
    const content = (JSON.parse(reminded.toolCalls[0]?.input ?? '{}') as { content: string }).content;
    expect(content.split('\n')).toEqual([
      'Task: build src/text/pad.js (padLeft, padRight).',
      'Done: 1 of 1 module written, 0 re-exported from src/index.js, no test run yet, not merged yet.',
      `Next: ${without.text}`,
    ]);
    const later = run.messages.slice(position + 2).flatMap((message) => (message.role === 'assistant' ? names(message) : []));
    expect(later).not.toContain('write_scratchpad');
  });

  it('acknowledges a reflection reminder in one sentence and takes the same step', () => {
    const run = driveWorker({ dir: copyExample(), task: padTask, options: DEFAULT_SIM_OPTIONS, interject: (turn) => (turn === 5 ? REFLECTION : null) });
    expect(run.handoff?.status).toBe('done');
    const position = run.messages.findIndex((message) => message.role === 'user' && message.content === REFLECTION);
    const answer = run.messages[position + 1];
    const without = simWorkerTurn(run.messages.slice(0, position), WORKER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    expect(answer).toMatchObject({
      role: 'assistant',
      text: `Checked my progress against the task: 1 of 1 module written, 1 re-exported from src/index.js, the last test run passed, not merged yet; the plan still holds. ${without.text}`,
      toolCalls: without.toolCalls,
    });
  });

  it('stops rewriting a scratchpad that keeps failing, and still finishes the task', () => {
    const dir = copyExample();
    const run = driveWorker({
      dir,
      task: padTask,
      options: DEFAULT_SIM_OPTIONS,
      interject: (turn) => (turn >= 1 ? SCRATCHPAD : null),
      failCall: (call) => (call.name === 'write_scratchpad' ? 'the scratchpad store is full' : null),
    });
    expect(run.handoff?.status).toBe('done');
    expect(run.executed.filter((each) => each.call.name === 'write_scratchpad')).toHaveLength(3);
    expect(projectTestsPass(dir)).toBe(true);
  });
});

describe('the sim worker and evidence', () => {
  it('submits again with the command it ran and the tail of its output when colony asks for evidence first', () => {
    let refused = 0;
    const run = driveWorker({
      dir: copyExample(),
      task: padTask,
      options: DEFAULT_SIM_OPTIONS,
      failCall: (call) =>
        call.name === 'submit_handoff' && refused++ === 0 ? `${EVIDENCE_FIRST_OPENING} a done handoff needs the command you ran and the tail of its output.` : null,
    });
    expect(run.handoff?.status).toBe('done');
    const submits = run.executed.filter((each) => each.call.name === 'submit_handoff');
    expect(submits.map((each) => each.isError)).toEqual([true, false]);
    const last = run.messages.filter((message) => message.role === 'assistant').at(-1);
    expect(last).toMatchObject({ text: 'colony asked for evidence first: submitting again with the command I ran and the tail of its output.' });
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0\n[\s\S]*# pass \d+/);
  });

  it('carries evidence in every done handoff: merged, nothing to merge, or not merged for want of the tool', () => {
    const merged = driveWorker({ dir: copyExample(), task: padTask, options: { ...DEFAULT_SIM_OPTIONS, bug: 1 } });
    const nothing = driveWorker({
      dir: copyExample(),
      task: padTask,
      options: DEFAULT_SIM_OPTIONS,
      onMerge: () => ({ content: 'nothing to merge: main already has these changes', isError: false }),
    });
    const unmerged = driveWorker({ dir: copyExample(), task: padTask, options: DEFAULT_SIM_OPTIONS, toolNames: ['read_file', 'write_file', 'run_command', 'submit_handoff'] });
    for (const run of [merged, nothing, unmerged]) {
      expect(run.handoff?.status).toBe('done');
      expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0\n[\s\S]*# fail 0/);
    }
  });
});
