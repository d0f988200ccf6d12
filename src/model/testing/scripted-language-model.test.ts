import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createScriptedLanguageModel } from './scripted-language-model.js';

const PROMPT = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hello' }] }];

async function partsOf(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe('createScriptedLanguageModel', () => {
  it('answers its turns in order through doGenerate and records each call', async () => {
    const model = createScriptedLanguageModel([
      { text: 'first', usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 4 } },
      { toolCalls: [{ name: 'read_file', input: { path: 'x' } }, { id: 'mine', name: 'shell', input: 'not json' }] },
    ]);
    const first = await model.doGenerate({ prompt: PROMPT, maxOutputTokens: 50 });
    expect(first.content).toEqual([{ type: 'text', text: 'first' }]);
    expect(first.finishReason.unified).toBe('stop');
    expect(first.usage.inputTokens).toMatchObject({ total: 10, noCache: 6, cacheRead: 4 });
    expect(first.usage.outputTokens.total).toBe(2);

    const second = await model.doGenerate({ prompt: PROMPT });
    expect(second.finishReason.unified).toBe('tool-calls');
    expect(second.content).toEqual([
      { type: 'tool-call', toolCallId: 'call-2-0', toolName: 'read_file', input: '{"path":"x"}' },
      { type: 'tool-call', toolCallId: 'mine', toolName: 'shell', input: 'not json' },
    ]);
    expect(model.calls.map((call) => [call.method, call.options.maxOutputTokens])).toEqual([
      ['generate', 50],
      ['generate', undefined],
    ]);
    expect(model.remainingTurns()).toBe(0);
  });

  it('streams the same answer as deltas that add up, ending with finish', async () => {
    const model = createScriptedLanguageModel([
      { text: 'A longer answer than one piece', toolCalls: [{ id: 't1', name: 'edit', input: { path: 'a.ts', text: 'x' } }] },
    ]);
    const { stream } = await model.doStream({ prompt: PROMPT });
    const parts = await partsOf(stream);
    expect(parts[0]?.type).toBe('stream-start');
    const deltas = parts.filter((part) => part.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((part) => part.delta).join('')).toBe('A longer answer than one piece');
    const inputDeltas = parts.filter((part) => part.type === 'tool-input-delta');
    expect(inputDeltas.map((part) => part.delta).join('')).toBe('{"path":"a.ts","text":"x"}');
    expect(parts.filter((part) => part.type === 'tool-call')).toEqual([
      { type: 'tool-call', toolCallId: 't1', toolName: 'edit', input: '{"path":"a.ts","text":"x"}' },
    ]);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls' } });
    expect(model.calls[0]?.method).toBe('stream');
  });

  it('counts usage from the prompt and answer when the turn does not give it', async () => {
    const model = createScriptedLanguageModel([{ text: '12345678' }]);
    const result = await model.doGenerate({ prompt: PROMPT });
    expect(result.usage.inputTokens.total).toBe(Math.ceil(JSON.stringify(PROMPT).length / 4));
    expect(result.usage.outputTokens.total).toBe(2);
  });

  it('fails loudly when called more often than scripted', async () => {
    const model = createScriptedLanguageModel([], { provider: 'p', modelId: 'm' });
    expect([model.provider, model.modelId]).toEqual(['p', 'm']);
    await expect(model.doGenerate({ prompt: PROMPT })).rejects.toThrow('has 0 turns');
  });
});
