import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventBody } from '../events/event-types.js';
import type { CallOptions, ChatModel, ModelError, ModelRequest, ModelResult, ModelTurn } from '../model/chat-model.js';
import type { ToolCall } from '../model/messages.js';
import type { AnyTool, Tool } from '../tools/tool.js';
import { runAgent } from './agent-loop.js';
import { type AgentRecorder } from './types.js';

type Step = ModelResult | ((request: ModelRequest, options: CallOptions) => ModelResult);

/** A model that answers from a script and keeps every request it saw. */
function scriptedModel(steps: Step[]): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted',
    requests,
    async call(request, options = {}) {
      requests.push({ ...request, messages: [...request.messages] });
      const step = steps.shift();
      if (step === undefined) throw new Error('script exhausted');
      return typeof step === 'function' ? step(request, options) : step;
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

const RATE_LIMITED: ModelError = { kind: 'rate-limit', message: '429 Too Many Requests', status: 429, retryable: true, retryAfterMs: 1000 };

function failure(error: ModelError, attempts: number): ModelResult {
  return { ok: false, error, attempts };
}

/** A sleep that only notes how long it was asked to wait. */
function recordWait(waits: number[]) {
  return (ms: number): Promise<void> => {
    waits.push(ms);
    return Promise.resolve();
  };
}

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

  it("names where each request's cached prefix ends: the previous request's last message and its own", async () => {
    const steps = [turn([call('a', 'echo', { text: 'one' })]), turn([call('b', 'echo', { text: 'two' })]), turn([call('c', 'finish', { summary: 'ok' })])];
    const model = scriptedModel(steps);
    await runAgent({ ...options(model, recorder()), cacheKey: 'agent-1' });
    // system, task; then + the call and its result (two messages) per step.
    expect(model.requests.map((request) => request.cache)).toEqual([
      { key: 'agent-1', breakpoints: [1] },
      { key: 'agent-1', breakpoints: [1, 3] },
      { key: 'agent-1', breakpoints: [3, 5] },
    ]);
    const uncached = scriptedModel([turn([call('d', 'finish', { summary: 'ok' })])]);
    await runAgent(options(uncached, recorder()));
    expect(uncached.requests[0]?.cache).toBeUndefined();
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

  it('records the CPU a call’s commands used with its end, and nothing where none was counted', async () => {
    const measured: Tool<{ text: string }> = { ...echo, execute: async (input) => ({ ok: true, output: input.text, cpuMs: 1_250.5 }) };
    const model = scriptedModel([turn([call('a', 'echo', { text: 'hi' })]), turn([call('b', 'finish', { summary: 'ok' })])]);
    const rec = recorder();
    expect(await runAgent({ ...options(model, rec), tools: [measured, finish] })).toEqual({ status: 'ended', steps: 2 });
    const ended = rec.events.filter((event) => event.type === 'tool.ended').map((event) => event.data);
    expect(ended[0]).toMatchObject({ name: 'echo', output: 'hi', cpuMs: 1_250.5 });
    expect(ended[1]).not.toHaveProperty('cpuMs');
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

  it('parks an agent whose provider is unavailable and makes the same call again, keeping its conversation and steps', async () => {
    const model = scriptedModel([
      turn([call('a', 'echo', { text: 'one' })]),
      failure(RATE_LIMITED, 6),
      failure({ ...RATE_LIMITED, kind: 'circuit-open', message: 'circuit open', status: null, retryAfterMs: 20 }, 0),
      turn([call('b', 'finish', { summary: 'ok' })]),
    ]);
    const rec = recorder();
    const waits: number[] = [];
    const parking = { firstDelayMs: 10, maxDelayMs: 50, random: () => 0.5, sleep: recordWait(waits) };
    // Two model calls in the budget: the parked ones do not count.
    const outcome = await runAgent({ ...options(model, rec, 2), parking });
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(model.requests).toHaveLength(4);
    expect(model.requests[3]?.messages).toEqual(model.requests[1]?.messages);
    // The rate limit's retry-after (1 s) is capped at 50 ms; the second park's jitter gives 15 ms, the open circuit's 20 ms is its floor.
    expect(waits).toEqual([50, 20]);
    expect(rec.log.slice(5)).toEqual([
      'model.requested',
      'agent.parked',
      'flush',
      'agent.unparked',
      'model.requested',
      'agent.parked',
      'flush',
      'agent.unparked',
      'model.requested',
      'model.responded',
      'tool.started',
      'flush',
      'tool.ended',
    ]);
    expect(rec.events.filter((event) => event.type === 'agent.parked').map((event) => event.data)).toMatchObject([
      { step: 2, kind: 'rate-limit', message: '429 Too Many Requests', attempts: 6, waitMs: 50 },
      { step: 2, kind: 'circuit-open', attempts: 0, waitMs: 20 },
    ]);
    expect(rec.events.some((event) => event.type === 'model.failed')).toBe(false);
  });

  it('still fails at once on a refused key, without parking', async () => {
    const model = scriptedModel([
      turn([call('a', 'echo', { text: 'one' })]),
      failure({ kind: 'auth', message: 'The provider refused the API key (HTTP 401).', status: 401, retryable: false, retryAfterMs: null }, 1),
    ]);
    const rec = recorder();
    const outcome = await runAgent({ ...options(model, rec), parking: { sleep: recordWait([]) } });
    expect(outcome).toMatchObject({
      status: 'failed',
      steps: 1,
      reason: 'the model call failed after 1 attempt(s): auth: The provider refused the API key (HTTP 401).',
      lastToolCall: 'echo({"text":"one"})',
    });
    expect(rec.events.at(-1)).toEqual({
      type: 'model.failed',
      data: { step: 2, kind: 'auth', message: 'The provider refused the API key (HTTP 401).', attempts: 1 },
    });
    expect(rec.log).not.toContain('agent.parked');
  });

  it('fails on unreadable answers rather than parking', async () => {
    const garbage: ModelError = { kind: 'garbage', message: 'unreadable', status: null, retryable: true, retryAfterMs: null };
    const outcome = await runAgent({ ...options(scriptedModel([failure(garbage, 3)]), recorder()), parking: { sleep: recordWait([]) } });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'the model call failed after 3 attempt(s): garbage: unreadable' });
  });

  it('stops a parked agent when the run is cancelled', async () => {
    const controller = new AbortController();
    const model = scriptedModel([failure(RATE_LIMITED, 6)]);
    const rec = recorder();
    const record = rec.record.bind(rec);
    rec.record = (event) => {
      record(event);
      if (event.type === 'agent.parked') controller.abort();
    };
    // The default, real sleep: without the abort this park would last ten minutes.
    const outcome = await runAgent({ ...options(model, rec), signal: controller.signal, parking: { firstDelayMs: 600_000, maxDelayMs: 600_000 } });
    expect(outcome).toMatchObject({ status: 'failed', steps: 0, reason: 'stopped: the run was cancelled' });
    expect(rec.log).not.toContain('agent.unparked');
  });

  it("records what a call changed in its provider's gate and circuit", async () => {
    const model = scriptedModel([
      (_request, callOptions) => {
        callOptions.onProvider?.({ type: 'limited', provider: 'p at http://x', from: 32, to: 16, reason: 'rate limited (HTTP 429)', holdMs: 2000 });
        callOptions.onProvider?.({ type: 'circuit-opened', provider: 'p at http://x', failures: 5, reason: 'network: reset', retryInMs: 30_000 });
        callOptions.onProvider?.({ type: 'circuit-closed', provider: 'p at http://x', openMs: 31_000 });
        return turn([call('b', 'finish', { summary: 'ok' })]);
      },
    ]);
    const rec = recorder();
    await runAgent(options(model, rec));
    expect(rec.events.filter((event) => event.type.startsWith('provider.'))).toEqual([
      { type: 'provider.limited', data: { provider: 'p at http://x', from: 32, to: 16, reason: 'rate limited (HTTP 429)', holdMs: 2000 } },
      { type: 'provider.circuit-opened', data: { provider: 'p at http://x', failures: 5, reason: 'network: reset', retryInMs: 30_000 } },
      { type: 'provider.circuit-closed', data: { provider: 'p at http://x', openMs: 31_000 } },
    ]);
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
