import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventBody } from '../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult, ModelTurn } from '../model/chat-model.js';
import type { ToolCall } from '../model/messages.js';
import type { AnyTool, Tool } from '../tools/tool.js';
import { runAgent, type AgentRecorder } from './agent-loop.js';

type Step = ModelResult | ((request: ModelRequest) => ModelResult);

/** A model that answers from a script and keeps every request it saw. */
function scriptedModel(steps: Step[]): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted',
    requests,
    async call(request) {
      requests.push({ ...request, messages: [...request.messages] });
      const step = steps.shift();
      if (step === undefined) throw new Error('script exhausted');
      return typeof step === 'function' ? step(request) : step;
    },
  };
}

function turn(toolCalls: ToolCall[], text = ''): ModelResult {
  const modelTurn: ModelTurn = {
    text,
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0 },
    costUsd: null,
    attempts: 1,
  };
  return { ok: true, turn: modelTurn };
}

function call(id: string, name: string, input: unknown): ToolCall {
  return { id, name, input: typeof input === 'string' ? input : JSON.stringify(input) };
}

function recorder(): AgentRecorder & { events: EventBody[]; log: string[] } {
  const events: EventBody[] = [];
  const log: string[] = [];
  return {
    events,
    log,
    record(event) {
      events.push(event);
      log.push(event.type);
    },
    flush() {
      log.push('flush');
    },
  };
}

const echo: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Echoes text.',
  parameters: z.object({ text: z.string() }),
  async execute(input) {
    return { ok: true, output: `echo: ${input.text}` };
  },
};

const finish: Tool<{ summary: string }> = {
  name: 'finish',
  description: 'Ends the agent.',
  parameters: z.object({ summary: z.string() }),
  async execute() {
    return { ok: true, output: 'done', endsAgent: true };
  },
};

const broken: Tool<Record<string, never>> = {
  name: 'broken',
  description: 'Throws.',
  parameters: z.object({}),
  async execute() {
    throw new Error('disk on fire');
  },
};

const tools: AnyTool[] = [echo, finish, broken];

function options(model: ChatModel, rec: AgentRecorder, maxSteps = 10) {
  return { model, tools, systemPrompt: 'You are a test.', task: 'Do the thing.', recorder: rec, maxSteps };
}

describe('runAgent', () => {
  it('runs tool calls, feeds results back and ends on the handoff tool', async () => {
    const model = scriptedModel([turn([call('a', 'echo', { text: 'hi' })]), turn([call('b', 'finish', { summary: 'ok' })])]);
    const rec = recorder();
    const outcome = await runAgent(options(model, rec));
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    const second = model.requests[1]?.messages ?? [];
    expect(second.at(-1)).toEqual({ role: 'tool', callId: 'a', toolName: 'echo', content: 'echo: hi', isError: false });
    expect(model.requests[0]?.tools.map((tool) => tool.name)).toEqual(['echo', 'finish', 'broken']);
    expect(model.requests[0]?.tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['text'] });
    expect(rec.log).toEqual([
      'model.requested',
      'model.responded',
      'tool.started',
      'flush',
      'tool.ended',
      'model.requested',
      'model.responded',
      'tool.started',
      'flush',
      'tool.ended',
    ]);
  });

  it('answers malformed JSON, unknown tools and bad arguments with errors the model can act on', async () => {
    const model = scriptedModel([
      turn([call('a', 'echo', '{"text": "unterminated'), call('b', 'writefile', { text: 'x' }), call('c', 'echo', { text: 3 })]),
      turn([call('d', 'finish', { summary: 'ok' })]),
    ]);
    const rec = recorder();
    expect(await runAgent(options(model, rec))).toEqual({ status: 'ended', steps: 2 });
    const results = (model.requests[1]?.messages ?? []).filter((message) => message.role === 'tool');
    expect(results.map((message) => message.isError)).toEqual([true, true, true]);
    const contents = results.map((message) => message.content);
    expect(contents[0]).toMatch(/^error: invalid arguments for echo: not valid JSON/);
    expect(contents[1]).toMatch(/unknown tool "writefile".*echo, finish, broken/);
    expect(contents[2]).toMatch(/invalid arguments for echo: text: .*expected string/);
  });

  it('turns a throwing tool into an error result and keeps going', async () => {
    const model = scriptedModel([turn([call('a', 'broken', {})]), turn([call('b', 'finish', { summary: 'ok' })])]);
    const rec = recorder();
    expect(await runAgent(options(model, rec))).toEqual({ status: 'ended', steps: 2 });
    const ended = rec.events.find((event) => event.type === 'tool.ended');
    expect(ended?.data).toMatchObject({ ok: false, output: 'error: broken failed unexpectedly: disk on fire' });
  });

  it('does not run calls that come after the handoff in the same turn', async () => {
    let echoed = 0;
    const counting: Tool<{ text: string }> = { ...echo, execute: async () => ((echoed += 1), { ok: true, output: 'x' }) };
    const model = scriptedModel([turn([call('a', 'finish', { summary: 'ok' }), call('b', 'echo', { text: 'late' })])]);
    const rec = recorder();
    const outcome = await runAgent({ ...options(model, rec), tools: [counting, finish] });
    expect(outcome.status).toBe('ended');
    expect(echoed).toBe(0);
    expect(rec.events.filter((event) => event.type === 'tool.ended').map((event) => event.data)).toMatchObject([
      { name: 'finish', ok: true },
      { name: 'echo', ok: false, output: 'error: not run: the handoff was already submitted' },
    ]);
  });

  it('nudges an agent that stops calling tools, then fails it', async () => {
    const model = scriptedModel([turn([], 'thinking'), turn([], 'still thinking'), turn([], 'I give up')]);
    const rec = recorder();
    const outcome = await runAgent({ ...options(model, rec), maxIdleTurns: 3 });
    expect(outcome).toMatchObject({ status: 'failed', steps: 3, reason: 'the agent stopped calling tools (3 turns in a row)' });
    expect(rec.events.filter((event) => event.type === 'agent.nudged')).toHaveLength(2);
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/submit_handoff/) });
  });

  it('fails an agent whose every call is invalid for too many turns, naming its last call', async () => {
    const bad = () => turn([call('x', 'echo', '{nope')]);
    const model = scriptedModel([bad(), bad(), bad()]);
    const outcome = await runAgent({ ...options(model, recorder()), maxRejectedTurns: 3 });
    expect(outcome).toEqual({
      status: 'failed',
      steps: 3,
      reason: 'the model sent only invalid tool calls for 3 turns in a row',
      lastToolCall: 'echo({nope)',
    });
  });

  it('stops at the step budget', async () => {
    const model = scriptedModel(Array.from({ length: 4 }, (_, index) => turn([call(`c${index}`, 'echo', { text: 'again' })])));
    const outcome = await runAgent(options(model, recorder(), 4));
    expect(outcome).toMatchObject({ status: 'failed', steps: 4, reason: 'the step budget ran out (4 model calls)' });
  });

  it('ends with the model error when the model call fails, and records retries', async () => {
    const model = scriptedModel([
      turn([call('a', 'echo', { text: 'one' })]),
      {
        ok: false,
        attempts: 6,
        error: { kind: 'rate-limit', message: '429 Too Many Requests', status: 429, retryable: true, retryAfterMs: 1000 },
      },
    ]);
    const rec = recorder();
    const outcome = await runAgent(options(model, rec));
    expect(outcome).toMatchObject({
      status: 'failed',
      steps: 1,
      reason: 'the model call failed after 6 attempt(s): rate-limit: 429 Too Many Requests',
      lastToolCall: 'echo({"text":"one"})',
    });
    expect(rec.events.at(-1)).toEqual({
      type: 'model.failed',
      data: { step: 2, kind: 'rate-limit', message: '429 Too Many Requests', attempts: 6 },
    });
  });

  it('runs no further tool call of the turn once cancelled', async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const cancelling: Tool<{ text: string }> = {
      ...echo,
      execute: async (input) => {
        ran.push(input.text);
        controller.abort();
        return { ok: true, output: 'x' };
      },
    };
    const model = scriptedModel([turn([call('a', 'echo', { text: 'first' }), call('b', 'echo', { text: 'second' })])]);
    const rec = recorder();
    const outcome = await runAgent({ ...options(model, rec), tools: [cancelling], signal: controller.signal });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'stopped: the run was cancelled' });
    expect(ran).toEqual(['first']);
    expect(rec.events.filter((event) => event.type === 'tool.ended').at(-1)?.data).toMatchObject({
      name: 'echo',
      ok: false,
      output: 'error: not run: the run was cancelled',
    });
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        controller.abort();
        return turn([call('a', 'echo', { text: 'one' })]);
      },
    ]);
    const outcome = await runAgent({ ...options(model, recorder()), signal: controller.signal });
    expect(outcome).toMatchObject({ status: 'failed', steps: 1, reason: 'stopped: the run was cancelled' });
  });
});
