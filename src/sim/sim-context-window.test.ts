import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../model/chat-model.js';
import { startModelServer } from '../model/server/model-server.js';
import type { ModelServer } from '../model/server/model-server.js';
import { createChatModel } from '../model/providers/language-model-chat.js';
import type { Message } from '../model/messages.js';
import { conversationLength } from '../model/messages.js';
import { resolveModel } from '../model/registry.js';
import { compact } from './testing/compaction.js';
import { createPlannerSession, goalWith, range } from './testing/planner-tools.js';
import { createSimLanguageModel } from './sim-language-model.js';
import { DEFAULT_SIM_OPTIONS, parseSimSpec } from './sim-options.js';
import type { SimOptions } from './sim-options.js';

const WINDOW: SimOptions = { ...DEFAULT_SIM_OPTIONS, context: 1_000 };

/** A worker's conversation of exactly `characters` characters. */
function conversationOf(characters: number): ModelRequest {
  const system = 'You are a worker.';
  const messages: Message[] = [
    { role: 'system', content: system },
    { role: 'user', content: 'x'.repeat(characters - system.length) },
  ];
  return { messages, tools: [{ name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object' } }] };
}

const REFUSAL = "This model's maximum context length is 1000 tokens, but the request has 1001 tokens (context_length_exceeded).";

describe('sim?context=N', () => {
  it('is read from the spec, an integer of at least 1000 tokens', () => {
    expect(parseSimSpec('sim?context=32000')).toMatchObject({ ok: true, options: { context: 32_000 } });
    expect(DEFAULT_SIM_OPTIONS.context).toBeNull();
    for (const spec of ['sim?context=999', 'sim?context=lots', 'sim?context=1.5e4']) {
      const parsed = parseSimSpec(spec);
      expect(parsed).toMatchObject({ ok: false, error: expect.stringContaining('context must be a number of tokens, an integer >= 1000') });
      expect(parsed.ok ? '' : parsed.error).toContain('Accepted keys: seed');
    }
  });

  it('refuses a larger request in-process as a real provider does: a 400 context-length error, not retried', async () => {
    const model = createChatModel(createSimLanguageModel(WINDOW, async () => undefined), { spec: 'sim?context=1000', sleep: async () => undefined });
    expect(await model.call(conversationOf(4_000))).toMatchObject({ ok: true });
    const refused = await model.call(conversationOf(4_001));
    expect(refused).toMatchObject({ ok: false, attempts: 1, error: { kind: 'context-length', status: 400, retryable: false } });
    expect(refused.ok ? '' : refused.error.message).toContain(REFUSAL);
  });

  it('answers the compaction request of a conversation it refuses, and the compacted conversation', async () => {
    const session = createPlannerSession({ brief: goalWith(range('src/lib/m', 12)) });
    session.turn();
    for (const task of session.openTasks().slice(0, 6)) {
      session.handOff(task.id, { status: 'done', summary: `Built ${task.title}. ${'It went as the brief said. '.repeat(80)}` });
      session.turn();
    }
    const window: SimOptions = { ...DEFAULT_SIM_OPTIONS, context: Math.floor(conversationLength(session.messages) / 4) - 50 };
    const model = createChatModel(createSimLanguageModel(window, async () => undefined), { spec: 'sim?context=N' });
    const tools = ['create_task', 'delegate', 'write_scratchpad', 'finish'].map((name) => ({ name, description: name, inputSchema: { type: 'object' } }));
    expect(await model.call({ messages: session.messages, tools })).toMatchObject({ ok: false, error: { kind: 'context-length' } });
    const { request, compacted } = compact(session.messages, 6, window);
    const summary = await model.call({ messages: request, tools: [] });
    expect(summary).toMatchObject({ ok: true, turn: { toolCalls: [], text: expect.stringMatching(/^Goal: the goal: 12 modules/) } });
    expect(await model.call({ messages: compacted, tools })).toMatchObject({ ok: true, turn: { text: expect.stringMatching(/^Waiting for 6 handoffs/) } });
  });
});

describe('sim?context=N over HTTP', () => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('is refused with a 400 in each wire format, and classified as a context-length error by the providers', async () => {
    server = await startModelServer({ model: createSimLanguageModel(WINDOW) });
    const retry = { maxAttempts: 3 };
    for (const [spec, env] of [
      ['openai-compatible:sim', {}],
      ['anthropic:sim', { ANTHROPIC_API_KEY: 'local-test-key' }],
    ] as const) {
      const resolved = resolveModel(spec, { env, baseUrl: `${server.url}/v1`, retry });
      if (!resolved.ok) throw new Error(resolved.error);
      expect(await resolved.model.call(conversationOf(4_000))).toMatchObject({ ok: true });
      const refused = await resolved.model.call(conversationOf(4_001));
      expect(refused).toMatchObject({ ok: false, attempts: 1, error: { kind: 'context-length', status: 400, retryable: false } });
      expect(refused.ok ? '' : refused.error.message).toContain(REFUSAL);
    }
    const raw = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'y'.repeat(4_001) }] }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({
      error: { message: REFUSAL, type: 'invalid_request_error', param: null, code: 'context_length_exceeded' },
    });
  });
});
