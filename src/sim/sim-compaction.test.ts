import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../model/messages.js';
import { COMPACTION_PROMPT, compact, stateOf } from './testing/compaction.js';
import { createPlannerSession, formatHandoffMessage, goalWith, PLANNER_TOOL_NAMES, range, subPlannerBrief } from './testing/planner-tools.js';
import { DEFAULT_SIM_OPTIONS } from './sim-options.js';
import { conversationTurn, simStalls, simTurn } from './sim-turn.js';
import { copyExample, driveWorker, EXAMPLE_DIR, removeExampleCopies, WORKER_TOOL_NAMES } from './testing/tool-executor.js';

const goal = goalWith(range('src/text/t', 3));
const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const prompt: Message = { role: 'user', content: COMPACTION_PROMPT };

function summarisedRole(messages: readonly Message[]): unknown {
  const answer = simTurn([...messages, prompt], [], DEFAULT_SIM_OPTIONS);
  expect(answer.toolCalls).toEqual([]);
  return stateOf(answer.text).role;
}

describe('a compaction request', () => {
  it('is answered with a summary whatever tools are offered', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const request = [...session.messages, prompt];
    for (const tools of [[], PLANNER_TOOL_NAMES, WORKER_TOOL_NAMES]) {
      const answer = simTurn(request, tools, DEFAULT_SIM_OPTIONS);
      expect(answer.toolCalls).toEqual([]);
      expect(answer.text).toMatch(/^Goal: the goal: 3 modules under src\/text\//);
      expect(stateOf(answer.text)).toMatchObject({ role: 'planner', turn: 1 });
    }
  });

  it('tells a planner from a worker by the conversation: the system prompt, a scope line, planner calls, handoffs', () => {
    const worker: Message = { role: 'system', content: 'You are a worker in colony. You own exactly one task.' };
    expect(summarisedRole([worker, { role: 'user', content: padTask }])).toBe('worker');
    expect(summarisedRole([{ role: 'system', content: 'You are a planner in colony. You are the root planner.' }, { role: 'user', content: goal }])).toBe('planner');
    expect(summarisedRole([{ role: 'system', content: 'You are the root planner.' }, { role: 'user', content: goal }])).toBe('planner');
    expect(summarisedRole([worker, { role: 'user', content: subPlannerBrief('src/text/', goal) }])).toBe('planner');
    const created: Message[] = [
      worker,
      { role: 'user', content: goal },
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_0_0', name: 'create_task', input: '{"title":"x","brief":"y"}' }] },
      { role: 'tool', callId: 'call_0_0', toolName: 'create_task', content: 'Created task t1: x', isError: false },
    ];
    expect(summarisedRole(created)).toBe('planner');
    const handedOff: Message[] = [worker, { role: 'user', content: goal }, { role: 'user', content: formatHandoffMessage({ id: 't1', title: 'x' }, { status: 'done', summary: 'ok' }) }];
    expect(summarisedRole(handedOff)).toBe('planner');
  });

  it('keeps the role of an earlier summary when nothing else shows it', () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    const neutral: Message[] = [{ role: 'system', content: 'You are an agent in colony.' }, ...session.messages.slice(1)];
    const once = compact(neutral, 0);
    expect(stateOf(once.summary)).toMatchObject({ role: 'planner' });
    expect(once.compacted).toHaveLength(3);
    expect(summarisedRole(once.compacted)).toBe('planner');
    expect(summarisedRole(neutral.slice(0, 2))).toBe('worker');
  });

  it('keeps the turn count going across summaries', () => {
    const run = driveWorker({ dir: copyExample(), task: padTask, options: DEFAULT_SIM_OPTIONS, maxTurns: 4 });
    removeExampleCopies();
    const once = compact(run.messages, 2);
    expect(stateOf(once.summary)).toMatchObject({ role: 'worker', turn: 3 });
    expect(conversationTurn(once.compacted)).toBe(4);
    const twice = compact(once.compacted, 0);
    expect(stateOf(twice.summary)).toMatchObject({ role: 'worker', turn: 4 });
    expect(conversationTurn(twice.compacted)).toBe(4);
    expect(simTurn(twice.compacted, WORKER_TOOL_NAMES, DEFAULT_SIM_OPTIONS).toolCalls[0]?.id).toBe('call_4_0');
  });

  it('never stalls, though the worker turns it summarises may', () => {
    const stalling = { ...DEFAULT_SIM_OPTIONS, stall: 1 };
    const run = driveWorker({ dir: copyExample(), task: padTask, options: DEFAULT_SIM_OPTIONS, maxTurns: 2 });
    removeExampleCopies();
    expect(simStalls(stalling, run.messages, WORKER_TOOL_NAMES)).toBe(true);
    expect(simStalls(stalling, [...run.messages, prompt], [])).toBe(false);
  });
});
