import { describe, expect, it, vi } from 'vitest';
import type { ColonyEvent } from '../events/event-types.js';
import type { ScriptedTurn } from '../model/testing/scripted-language-model.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import type { AnyTool, ToolResult } from '../tools/tool.js';
import { runAgent, type AgentOutcome } from './agent-loop.js';
import { endingCallSucceeded, interruptedAnswer } from './agent-restore.js';
import {
  AGENT_ID,
  capturingModel,
  countingTools,
  KILLED,
  NEVER_ANSWERS,
  recordStart,
  restartedLog,
  SYSTEM_PROMPT,
  TASK,
  testRecorder,
  UNTIL_THERE,
  type AgentLog,
  type TestRecorder,
} from './testing/agent-restart.js';
import { rebuildConversation } from './conversation-rebuild.js';

const INTERRUPTED =
  'error: interrupted by a restart: colony stopped while this call was running, and the command was killed; check the workspace before repeating it';

const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });

/** A life of the agent that colony never sees end: its loop stays stuck in a call, or its recorder dies. */
function firstLife(tools: AnyTool[], turns: Parameters<typeof capturingModel>[0], options: { maxSteps?: number; killAfter?: Parameters<typeof testRecorder>[1] } = {}) {
  const store = createMemoryEventStore();
  const recorder = testRecorder(store, options.killAfter);
  const model = capturingModel(turns);
  recordStart(recorder, tools);
  const running = runAgent({ model, tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: options.maxSteps ?? 10 }).catch(
    (error: unknown) => (error instanceof Error && error.message === KILLED ? 'killed' : Promise.reject(error)),
  );
  return { store, recorder, model, running };
}

/** Colony starts again from `events` and runs the agent's next life from them. */
function nextLife(events: readonly ColonyEvent[], tools: AnyTool[], turns: ScriptedTurn[], options: { maxSteps?: number; attempt?: number; answer?: (c: Parameters<typeof interruptedAnswer>[0]) => Promise<ToolResult> } = {}) {
  const log: AgentLog = restartedLog(createMemoryEventStore, events);
  const recorder: TestRecorder = testRecorder(log);
  const model = capturingModel(turns);
  const conversation = rebuildConversation(events);
  const outcome: Promise<AgentOutcome> = runAgent({
    model,
    tools,
    systemPrompt: 'not used: the conversation has it',
    task: 'not used either',
    recorder,
    maxSteps: options.maxSteps ?? 10,
    restore: { conversation, attempt: options.attempt ?? 2, answerInterrupted: options.answer ?? (async (each) => interruptedAnswer(each)) },
  });
  return { log, recorder, model, conversation, outcome };
}

const types = (events: readonly ColonyEvent[]): string[] => events.map((event) => event.type);

describe('runAgent restoring a rebuilt conversation', () => {
  it('answers the call colony stopped in without running it again, runs the calls that never started, and goes on', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(tools, [
      { toolCalls: [call('c1', 'echo', { text: 'a' }), call('c2', 'slow_command', { command: 'npm test' }), call('c3', 'echo', { text: 'b' })] },
    ]);
    await vi.waitFor(() => expect(runs).toContain('slow_command npm test'), UNTIL_THERE);
    // SIGKILL now: the log keeps what was flushed, which is everything up to the slow call's start.
    const durable = await life.recorder.durable();
    expect(types(durable).slice(-2)).toEqual(['tool.ended', 'tool.started']);
    expect(endingCallSucceeded(rebuildConversation(durable), ['finish'])).toBe(false);

    const next = nextLife(durable, tools, [{ toolCalls: [call('c4', 'finish', { summary: 'done' })] }]);
    expect(await next.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(runs).toEqual(['echo a', 'slow_command npm test', 'echo b', 'finish']);

    const after = (await next.log.read({ agentId: AGENT_ID })).slice(durable.length);
    expect(next.recorder.trail.slice(0, 6)).toEqual(['agent.restored', 'tool.ended', 'flush', 'tool.started', 'flush', 'tool.ended']);
    expect(after[0]?.data).toEqual({ attempt: 2, step: 1, interrupted: 1, notStarted: 1 });
    expect(after[1]?.data).toEqual({ step: 1, callId: 'c2', name: 'slow_command', ok: false, output: INTERRUPTED, durationMs: 0 });
    expect(after.find((event) => event.type === 'model.requested')?.data).toMatchObject({ step: 2 });
    expect(next.model.seen[0]?.slice(-3)).toEqual([
      { role: 'tool', callId: 'c1', toolName: 'echo', content: 'echo: a', isError: false },
      { role: 'tool', callId: 'c2', toolName: 'slow_command', content: INTERRUPTED, isError: true },
      { role: 'tool', callId: 'c3', toolName: 'echo', content: 'echo: b', isError: false },
    ]);
    // Both lives are one agent: its whole log rebuilds to what the second life's model saw, and more.
    const whole = rebuildConversation(await next.log.read({ agentId: AGENT_ID }));
    expect(whole.messages.slice(0, next.model.seen[0]?.length)).toEqual(next.model.seen[0]);
    expect([whole.step, endingCallSucceeded(whole, ['finish']), endingCallSucceeded(whole, ['submit_handoff'])]).toEqual([2, true, false]);
  });

  it('runs every call when colony stopped between the answer and the first call', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(tools, [{ toolCalls: [call('c1', 'echo', { text: 'a' }), call('c2', 'echo', { text: 'b' })] }], {
      killAfter: (event) => event.type === 'model.responded',
    });
    expect(await life.running).toBe('killed');
    // The store's flush is shared by every agent of a run: another agent's flush can make this answer durable before its first call starts.
    const events = await life.store.read({ agentId: AGENT_ID });
    expect(types(events).at(-1)).toBe('model.responded');
    expect(runs).toEqual([]);

    const next = nextLife(events, tools, [{ toolCalls: [call('c3', 'finish', { summary: 'done' })] }]);
    expect(await next.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(runs).toEqual(['echo a', 'echo b', 'finish']);
    expect((await next.log.read({ agentId: AGENT_ID })).find((event) => event.type === 'agent.restored')?.data).toMatchObject({ interrupted: 0, notStarted: 2 });
  });

  it('asks the model again for the same step when colony stopped during the model call', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(tools, [{ toolCalls: [call('c1', 'echo', { text: 'a' })] }, NEVER_ANSWERS]);
    await vi.waitFor(() => expect(life.model.seen).toHaveLength(2), UNTIL_THERE);
    const events = await life.store.read({ agentId: AGENT_ID });
    expect(types(events).at(-1)).toBe('model.requested');

    const next = nextLife(events, tools, [{ toolCalls: [call('c2', 'finish', { summary: 'done' })] }]);
    expect(await next.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(next.model.seen).toEqual([life.model.seen[1]]);
    const after = (await next.log.read({ agentId: AGENT_ID })).slice(events.length);
    expect(types(after).slice(0, 2)).toEqual(['agent.restored', 'model.requested']);
    expect(after[1]?.data).toMatchObject({ step: 2 });
    expect(runs).toEqual(['echo a', 'finish']);
  });

  it('counts the steps of every life against maxSteps', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(
      tools,
      [{ toolCalls: [call('c1', 'echo', { text: 'a' })] }, { toolCalls: [call('c2', 'echo', { text: 'b' })] }, { toolCalls: [call('c3', 'slow_command', { command: 'make' })] }],
      { maxSteps: 3 },
    );
    await vi.waitFor(() => expect(runs).toContain('slow_command make'), UNTIL_THERE);
    const durable = await life.recorder.durable();
    expect(rebuildConversation(durable)).toMatchObject({ step: 3, notStarted: [] });

    const spent = nextLife(durable, tools, [], { maxSteps: 3 });
    expect(await spent.outcome).toEqual({ status: 'failed', steps: 3, reason: 'the step budget ran out (3 model calls)', lastToolCall: 'slow_command({"command":"make"})' });
    expect(spent.model.seen).toEqual([]);

    const oneMore = nextLife(durable, tools, [{ toolCalls: [call('c4', 'finish', { summary: 'done' })] }], { maxSteps: 4 });
    expect(await oneMore.outcome).toEqual({ status: 'ended', steps: 4 });
    expect(oneMore.model.seen).toHaveLength(1);
  });

  it('ends without another model call when the answer to the interrupted call ends the agent', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(tools, [{ toolCalls: [call('c1', 'slow_command', { command: 'submit' }), call('c2', 'echo', { text: 'after' })] }]);
    await vi.waitFor(() => expect(runs).toEqual(['slow_command submit']), UNTIL_THERE);
    const stored: ToolResult = { ok: true, output: 'handoff submitted (stored before the restart)', endsAgent: true };
    const next = nextLife(await life.recorder.durable(), tools, [], { answer: async () => stored });
    expect(await next.outcome).toEqual({ status: 'ended', steps: 1 });
    expect(runs).toEqual(['slow_command submit']);
    const ended = (await next.log.read({ agentId: AGENT_ID })).filter((event) => event.type === 'tool.ended');
    expect(ended.map((event) => event.data)).toMatchObject([
      { callId: 'c1', ok: true, output: 'handoff submitted (stored before the restart)' },
      { callId: 'c2', ok: false, output: 'error: not run: the handoff was already submitted' },
    ]);
    expect(next.model.seen).toEqual([]);
  });

  it('survives a second stop in the calls it runs for the first: the third life answers that one', async () => {
    const { tools, runs } = countingTools();
    const life = firstLife(tools, [{ toolCalls: [call('c1', 'slow_command', { command: 'one' }), call('c2', 'slow_command', { command: 'two' })] }]);
    await vi.waitFor(() => expect(runs).toEqual(['slow_command one']), UNTIL_THERE);
    const second = nextLife(await life.recorder.durable(), tools, []);
    await vi.waitFor(() => expect(runs).toEqual(['slow_command one', 'slow_command two']), UNTIL_THERE);
    const durable = await second.recorder.durable();
    const rebuilt = rebuildConversation(durable);
    expect([rebuilt.interrupted.map(({ call: each }) => each.id), rebuilt.notStarted]).toEqual([['c2'], []]);

    const third = nextLife(durable, tools, [{ toolCalls: [call('c3', 'finish', { summary: 'done' })] }], { attempt: 3 });
    expect(await third.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(runs).toEqual(['slow_command one', 'slow_command two', 'finish']);
    const restored = (await third.log.read({ agentId: AGENT_ID })).filter((event) => event.type === 'agent.restored');
    expect(restored.map((event) => event.data)).toEqual([
      { attempt: 2, step: 1, interrupted: 1, notStarted: 1 },
      { attempt: 3, step: 1, interrupted: 1, notStarted: 0 },
    ]);
    expect(third.model.seen[0]?.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([INTERRUPTED, INTERRUPTED]);
  });

  it('nudges an agent whose last answer had no tool call before colony stopped, as it would have', async () => {
    const { tools } = countingTools();
    const life = firstLife(tools, [{ text: 'Let me think.' }], { killAfter: (event) => event.type === 'model.responded' });
    expect(await life.running).toBe('killed');
    const next = nextLife(await life.store.read({ agentId: AGENT_ID }), tools, [{ toolCalls: [call('c1', 'finish', { summary: 'done' })] }]);
    expect(await next.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(next.recorder.trail.slice(0, 3)).toEqual(['agent.restored', 'flush', 'agent.nudged']);
    expect(next.model.seen[0]?.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/submit_handoff/) });
  });
});
