import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../chat-model.js';
import type { Message } from '../messages.js';
import { resolveModel } from '../registry.js';
import { startModelServer, type ModelServer } from '../server/model-server.js';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';
import { markCacheBreakpoints } from './prompt-caching.js';
import { messagesToPrompt } from './prompt-conversion.js';

const CONVERSATION: readonly Message[] = [
  { role: 'system', content: 'You are a worker.' },
  { role: 'user', content: 'the task' },
  { role: 'assistant', text: '', toolCalls: [{ id: 'call-1', name: 'read_file', input: '{"path":"a.js"}' }] },
  { role: 'tool', callId: 'call-1', toolName: 'read_file', content: 'export const a = 1;', isError: false },
  { role: 'user', content: 'your scratchpad: empty' },
];

const HINTED: ModelRequest = { messages: CONVERSATION, tools: [], cache: { key: 'agent-7', breakpoints: [1, 3] } };

function markedIndexes(style: 'breakpoints' | 'key' | 'prefix', request: ModelRequest): number[] {
  const marked = markCacheBreakpoints(messagesToPrompt(request.messages), style, request.cache);
  return marked.flatMap((message, index) => (message.providerOptions?.anthropic === undefined ? [] : [index]));
}

describe('markCacheBreakpoints', () => {
  it('marks the system prompt and each hinted message for Anthropic, and nothing for the others', () => {
    expect(markedIndexes('breakpoints', HINTED)).toEqual([0, 1, 3]);
    expect(markedIndexes('breakpoints', { ...HINTED, cache: { key: 'agent-7', breakpoints: [3, 9, -1] } })).toEqual([0, 3]);
    expect(markedIndexes('breakpoints', { messages: CONVERSATION, tools: [] })).toEqual([]);
    expect(markedIndexes('key', HINTED)).toEqual([]);
    expect(markedIndexes('prefix', HINTED)).toEqual([]);
  });
});

describe('prompt caching on the wire', () => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  /** The JSON body `spec` sends for `request` to a local server speaking its provider's format. */
  async function bodySentBy(spec: string, request: ModelRequest): Promise<Record<string, unknown>> {
    server = await startModelServer({ model: createScriptedLanguageModel([{ text: 'ok' }]) });
    const resolved = resolveModel(spec, { env: { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a' }, baseUrl: `${server.url}/v1` });
    if (!resolved.ok) throw new Error(resolved.error);
    expect(await resolved.model.call(request)).toMatchObject({ ok: true });
    return server.requests[0]?.body as Record<string, unknown>;
  }

  it('sends Anthropic cache_control on the system prompt and at the end of each hinted message', async () => {
    const body = await bodySentBy('anthropic:claude-sonnet-4-5', HINTED);
    const ephemeral = { type: 'ephemeral' };
    expect(body.system).toEqual([{ type: 'text', text: 'You are a worker.', cache_control: ephemeral }]);
    const messages = body.messages as { role: string; content: { type: string; cache_control?: unknown }[] }[];
    // The task, the tool call, and the tool result with the scratchpad (one user turn on the wire).
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]?.content.map((block) => block.cache_control)).toEqual([ephemeral]);
    expect(messages[1]?.content.map((block) => block.cache_control)).toEqual([undefined]);
    expect(messages[2]?.content.map((block) => [block.type, block.cache_control])).toEqual([
      ['tool_result', ephemeral],
      ['text', undefined],
    ]);
  });

  it('sends no cache_control without a hint', async () => {
    const body = await bodySentBy('anthropic:claude-sonnet-4-5', { messages: CONVERSATION, tools: [] });
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it("sends OpenAI the agent's prompt_cache_key, and an OpenAI-compatible server nothing", async () => {
    const openai = await bodySentBy('openai:gpt-5', HINTED);
    expect(openai.prompt_cache_key).toBe('agent-7');
    await server?.close();
    const compatible = await bodySentBy('openai-compatible:qwen3-coder', HINTED);
    expect(JSON.stringify(compatible)).not.toMatch(/cache/);
  });
});
