import { afterEach, describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest, ToolSpec } from './chat-model.js';
import { startModelServer } from './server/model-server.js';
import type { ModelServer } from './server/model-server.js';
import { createChatModel } from './providers/language-model-chat.js';
import type { Message } from './messages.js';
import { promptToMessages } from './providers/prompt-conversion.js';
import { resolveModel } from './registry.js';
import { createScriptedLanguageModel } from './testing/scripted-language-model.js';
import type { ScriptedLanguageModel, ScriptedTurn } from './testing/scripted-language-model.js';

/**
 * One suite every ChatModel path must pass: the scripted model called in process, and each
 * hosted provider's real adapter talking HTTP to the model server in that provider's format.
 */
interface Target {
  readonly name: string;
  /** Whether the wire format can say that a tool result is an error (OpenAI's cannot). */
  readonly keepsToolErrors: boolean;
  /** Price per million tokens (input, cached input, output), or null when unknown. */
  readonly price: { input: number; cached: number; output: number } | null;
  /** The arguments of a call an answer was cut off in right after its name: none, or Anthropic's empty object. */
  readonly argumentsCutAtTheName: '' | '{}';
  open(turns: readonly ScriptedTurn[]): Promise<{ model: ChatModel; scripted: ScriptedLanguageModel; server: ModelServer | null }>;
}

const ENV = { OPENAI_API_KEY: 'sk-test-openai', ANTHROPIC_API_KEY: 'sk-test-anthropic' };

function overHttp(spec: string, keepsToolErrors: boolean, price: Target['price'], argumentsCutAtTheName: Target['argumentsCutAtTheName'] = ''): Target {
  return {
    name: spec,
    keepsToolErrors,
    price,
    argumentsCutAtTheName,
    async open(turns) {
      const scripted = createScriptedLanguageModel(turns);
      const server = await startModelServer({ model: scripted });
      const resolved = resolveModel(spec, { baseUrl: `${server.url}/v1`, env: ENV });
      if (!resolved.ok) throw new Error(resolved.error);
      return { model: resolved.model, scripted, server };
    },
  };
}

const TARGETS: readonly Target[] = [
  {
    name: 'scripted model in process',
    keepsToolErrors: true,
    price: null,
    argumentsCutAtTheName: '',
    open: (turns) => {
      const scripted = createScriptedLanguageModel(turns);
      return Promise.resolve({ model: createChatModel(scripted, { spec: 'scripted' }), scripted, server: null });
    },
  },
  overHttp('openai:gpt-5', false, { input: 1.25, cached: 0.125, output: 10 }),
  overHttp('anthropic:claude-sonnet-4-5', true, { input: 3, cached: 0.3, output: 15 }, '{}'),
  overHttp('openai-compatible:qwen3-coder', false, null),
];

const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Reads a file of the workspace.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const OPENING: readonly Message[] = [
  { role: 'system', content: 'You are a careful engineer.' },
  { role: 'user', content: 'What does notes.txt say?' },
];

describe.each(TARGETS)('ChatModel conformance: $name', (target) => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  async function open(turns: readonly ScriptedTurn[]): Promise<{ model: ChatModel; scripted: ScriptedLanguageModel }> {
    const opened = await target.open(turns);
    server = opened.server;
    return opened;
  }

  it('answers with text, the finish reason and the usage', async () => {
    const { model } = await open([{ text: 'It says hello, world.', usage: { inputTokens: 120, outputTokens: 7 } }]);
    const result = await model.call({ messages: OPENING, tools: [] });
    expect(result).toMatchObject({
      ok: true,
      turn: {
        text: 'It says hello, world.',
        toolCalls: [],
        finishReason: 'stop',
        usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 0 },
        attempts: 1,
      },
    });
  });

  it('carries a tool call out and its result back in on the next turn', async () => {
    const { model, scripted } = await open([
      { text: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'notes.txt' } }] },
      { text: 'It says: buy milk.' },
    ]);
    const first = await model.call({ messages: OPENING, tools: [READ_FILE] });
    if (!first.ok) throw new Error(first.error.message);
    expect(first.turn.text).toBe('Let me look.');
    expect(first.turn.finishReason).toBe('tool-calls');
    expect(first.turn.toolCalls).toEqual([{ id: 'call_1', name: 'read_file', input: '{"path":"notes.txt"}' }]);

    const conversation: Message[] = [
      ...OPENING,
      { role: 'assistant', text: first.turn.text, toolCalls: first.turn.toolCalls },
      { role: 'tool', callId: 'call_1', toolName: 'read_file', content: 'buy milk', isError: false },
    ];
    const second = await model.call({ messages: conversation, tools: [READ_FILE] });
    expect(second).toMatchObject({ ok: true, turn: { text: 'It says: buy milk.', toolCalls: [] } });

    const [firstCall, secondCall] = scripted.calls;
    expect(firstCall?.options.tools).toEqual([
      expect.objectContaining({ type: 'function', name: 'read_file', inputSchema: expect.objectContaining({ required: ['path'] }) }),
    ]);
    expect(promptToMessages(secondCall?.options.prompt ?? [])).toEqual(conversation);
  });

  it('reports a failed tool as an error where the wire format can say so', async () => {
    const { model, scripted } = await open([{ text: 'The file is missing.' }]);
    const conversation: Message[] = [
      ...OPENING,
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_9', name: 'read_file', input: '{"path":"gone.txt"}' }] },
      { role: 'tool', callId: 'call_9', toolName: 'read_file', content: 'ENOENT: gone.txt', isError: true },
    ];
    await model.call({ messages: conversation, tools: [READ_FILE] });
    const received = promptToMessages(scripted.calls[0]?.options.prompt ?? []);
    expect(received.at(-1)).toEqual({
      role: 'tool',
      callId: 'call_9',
      toolName: 'read_file',
      content: 'ENOENT: gone.txt',
      isError: target.keepsToolErrors,
    });
  });

  it('returns several tool calls of one turn in order', async () => {
    const { model } = await open([
      {
        toolCalls: [
          { id: 'call_a', name: 'read_file', input: { path: 'a.txt' } },
          { id: 'call_b', name: 'read_file', input: { path: 'b.txt' } },
        ],
      },
    ]);
    const result = await model.call({ messages: OPENING, tools: [READ_FILE] });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.turn.toolCalls.map((call) => [call.id, call.input])).toEqual([
      ['call_a', '{"path":"a.txt"}'],
      ['call_b', '{"path":"b.txt"}'],
    ]);
  });

  it('hands malformed tool arguments over exactly as the model produced them', async () => {
    const { model } = await open([{ toolCalls: [{ id: 'call_x', name: 'read_file', input: '{"path": "a.txt"' }] }]);
    const result = await model.call({ messages: OPENING, tools: [READ_FILE] });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.turn.toolCalls).toEqual([{ id: 'call_x', name: 'read_file', input: '{"path": "a.txt"' }]);
  });

  it('reports an answer cut off at its output limit, with the call it stopped in as far as its arguments got', async () => {
    const { model } = await open([
      {
        finishReason: 'length',
        toolCalls: [
          { id: 'call_a', name: 'read_file', input: { path: 'a.txt' } },
          { id: 'call_b', name: 'read_file', input: '{"path": "b.t' },
        ],
      },
      { finishReason: 'length', toolCalls: [{ id: 'call_c', name: 'read_file', input: '' }] },
    ]);
    const cut = await model.call({ messages: OPENING, tools: [READ_FILE], maxOutputTokens: 40 });
    expect(cut).toMatchObject({ ok: true, turn: { finishReason: 'length' } });
    expect(cut.ok && cut.turn.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', input: '{"path":"a.txt"}' },
      { id: 'call_b', name: 'read_file', input: '{"path": "b.t' },
    ]);
    const atTheName = await model.call({ messages: OPENING, tools: [READ_FILE], maxOutputTokens: 40 });
    expect(atTheName.ok && atTheName.turn).toMatchObject({ finishReason: 'length', toolCalls: [{ id: 'call_c', name: 'read_file', input: target.argumentsCutAtTheName }] });
  });

  it('passes the output token limit to the model', async () => {
    const { model, scripted } = await open([{ text: 'Short.' }]);
    const request: ModelRequest = { messages: OPENING, tools: [], maxOutputTokens: 321 };
    await model.call(request);
    expect(scripted.calls[0]?.options.maxOutputTokens).toBe(321);
  });

  it('describes the tools but allows no call when the request asks for text only', async () => {
    const { model, scripted } = await open([{ text: 'A summary.' }]);
    const result = await model.call({ messages: OPENING, tools: [READ_FILE], toolChoice: 'none' });
    expect(result.ok).toBe(true);
    expect(scripted.calls[0]?.options.tools?.map((tool) => tool.name)).toEqual(['read_file']);
    expect(scripted.calls[0]?.options.toolChoice).toEqual({ type: 'none' });
  });

  it('counts cached input tokens and prices the turn when the price is known', async () => {
    const { model } = await open([{ text: 'Done.', usage: { inputTokens: 1_000_000, outputTokens: 100_000, cachedInputTokens: 400_000 } }]);
    const result = await model.call({ messages: OPENING, tools: [] });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.turn.usage).toEqual({ inputTokens: 1_000_000, outputTokens: 100_000, cachedInputTokens: 400_000 });
    const price = target.price;
    if (price === null) {
      expect(result.turn.costUsd).toBeNull();
    } else {
      expect(result.turn.costUsd).toBeCloseTo(0.6 * price.input + 0.4 * price.cached + 0.1 * price.output, 10);
    }
  });
});
