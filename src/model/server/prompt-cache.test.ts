import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import type { LanguageModel, LanguageModelUsage, ModelMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';
import { startModelServer } from './model-server.js';
import type { ModelServer } from './model-server.js';
import type { PromptCacheOptions } from './prompt-cache.js';

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

let clock = 1_700_000_000_000;
const MINUTE = 60_000;

async function serve(answers: number, promptCache: PromptCacheOptions = {}): Promise<ModelServer> {
  clock = 1_700_000_000_000;
  const turns = Array.from({ length: answers }, (_unused, index) => ({ text: `Answer ${index + 1}.` }));
  server = await startModelServer({ model: createScriptedLanguageModel(turns), now: () => clock, promptCache });
  return server;
}

/** Tokens as the server counts them: a quarter of the UTF-8 bytes of the JSON, rounded up (the tests write keys sorted). */
function tokensOf(unit: Readonly<Record<string, unknown>>): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(unit), 'utf8') / 4);
}

/** Text of about `bytes` bytes, different for each `topic`. */
function filler(topic: string, bytes: number): string {
  return `Notes on ${topic}: keep changes small and tested. `.repeat(Math.ceil(bytes / 40)).slice(0, bytes);
}

/** System prompts go in the messages, as colony sends them, where each can carry a breakpoint. */
const QUIET = { allowSystemInMessages: true, maxOutputTokens: 100 } as const;
const EPHEMERAL = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

interface InputUsage {
  readonly total: number | undefined;
  readonly noCache: number | undefined;
  readonly read: number | undefined;
  readonly write: number | undefined;
}

function inputOf(usage: LanguageModelUsage): InputUsage {
  return {
    total: usage.inputTokens,
    noCache: usage.inputTokenDetails.noCacheTokens,
    read: usage.inputTokenDetails.cacheReadTokens,
    write: usage.inputTokenDetails.cacheWriteTokens,
  };
}

describe('Anthropic prompt caching, at the breakpoints the request marks', () => {
  const SYSTEM = filler('the workspace', 5000);
  const systemTokens = tokensOf({ text: SYSTEM, type: 'text' });
  const QUESTION = 'What does notes.txt say?';
  const questionTokens = tokensOf({ role: 'user', text: QUESTION, type: 'text' });

  function claude(running: ModelServer): LanguageModel {
    return createAnthropic({ baseURL: `${running.url}/v1`, apiKey: 'x' })('claude-test');
  }

  function withSystem(system: string, ...rest: ModelMessage[]): ModelMessage[] {
    return [{ role: 'system', content: system, providerOptions: EPHEMERAL }, ...rest];
  }

  it('writes a marked system prompt on the first request and reads it on the second, streamed or not', async () => {
    const running = await serve(2);
    expect(systemTokens).toBeGreaterThanOrEqual(1024);
    const messages = withSystem(SYSTEM, { role: 'user', content: QUESTION });
    const first = await generateText({ ...QUIET, model: claude(running), messages });
    expect(inputOf(first.usage)).toEqual({
      total: systemTokens + questionTokens,
      noCache: questionTokens,
      read: 0,
      write: systemTokens,
    });
    const second = streamText({ ...QUIET, model: claude(running), messages });
    expect(inputOf(await second.usage)).toEqual({
      total: systemTokens + questionTokens,
      noCache: questionTokens,
      read: systemTokens,
      write: 0,
    });
  });

  it('reads the conversation so far as it grows and writes only the new turns', async () => {
    const running = await serve(2);
    const opening: ModelMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: QUESTION, providerOptions: EPHEMERAL },
    ];
    const first = await generateText({ ...QUIET, model: claude(running), messages: opening });
    expect(inputOf(first.usage)).toMatchObject({ read: 0, write: systemTokens + questionTokens, noCache: 0 });

    const growth: ModelMessage[] = [
      { role: 'assistant', content: 'It lists three open bugs.' },
      { role: 'user', content: 'Fix the first one.', providerOptions: EPHEMERAL },
    ];
    const growthTokens =
      tokensOf({ role: 'assistant', text: 'It lists three open bugs.', type: 'text' }) +
      tokensOf({ role: 'user', text: 'Fix the first one.', type: 'text' });
    const second = await generateText({ ...QUIET, model: claude(running), messages: [...opening, ...growth] });
    expect(inputOf(second.usage)).toEqual({
      total: systemTokens + questionTokens + growthTokens,
      noCache: 0,
      read: systemTokens + questionTokens,
      write: growthTokens,
    });
  });

  it('finds an earlier prefix up to 20 blocks before a breakpoint, and not 21', async () => {
    const running = await serve(4);
    const turns = (count: number): ModelMessage[] =>
      Array.from({ length: count }, (_unused, index): ModelMessage =>
        index % 2 === 0 ? { role: 'assistant', content: `Step ${index}.` } : { role: 'user', content: `Go on ${index}.` },
      );
    const opening: ModelMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: QUESTION, providerOptions: EPHEMERAL },
    ];
    const cached = systemTokens + questionTokens;
    await generateText({ ...QUIET, model: claude(running), messages: opening });
    // Twenty blocks past the cached one, the last marked: one user message, so one block, each.
    const twenty = await generateText({
      ...QUIET,
      model: claude(running),
      messages: [...opening.slice(0, 1), { role: 'user', content: QUESTION }, ...turns(19), { role: 'user', content: 'Done?', providerOptions: EPHEMERAL }],
    });
    expect(inputOf(twenty.usage)).toMatchObject({ read: cached });

    await generateText({ ...QUIET, model: claude(running), messages: opening });
    const twentyOne = await generateText({
      ...QUIET,
      model: claude(running),
      messages: [...opening.slice(0, 1), { role: 'user', content: QUESTION }, ...turns(20), { role: 'assistant', content: 'Done.', providerOptions: EPHEMERAL }],
    });
    expect(inputOf(twentyOne.usage)).toMatchObject({ read: 0 });
  });

  it('refuses more than four breakpoints with a 400 in its error format', async () => {
    const running = await serve(0);
    const marked = { type: 'text', text: 'x', cache_control: { type: 'ephemeral' } };
    const response = await fetch(`${running.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 100,
        system: [marked, marked],
        messages: [{ role: 'user', content: [marked, marked, marked] }],
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' },
    });
  });

  it('caches no prefix under 1024 tokens', async () => {
    const running = await serve(2);
    const short = filler('the workspace', 4000);
    expect(tokensOf({ text: short, type: 'text' })).toBeLessThan(1024);
    const messages = withSystem(short, { role: 'user', content: QUESTION });
    const total = tokensOf({ text: short, type: 'text' }) + questionTokens;
    for (let request = 0; request < 2; request += 1) {
      const result = await generateText({ ...QUIET, model: claude(running), messages });
      expect(inputOf(result.usage)).toEqual({ total, noCache: total, read: 0, write: 0 });
    }
  });

  it('forgets a prefix five minutes after its last write or read', async () => {
    const running = await serve(4);
    const messages = withSystem(SYSTEM, { role: 'user', content: QUESTION });
    const ask = async (): Promise<InputUsage> => inputOf((await generateText({ ...QUIET, model: claude(running), messages })).usage);
    expect(await ask()).toMatchObject({ read: 0, write: systemTokens });
    clock += 4 * MINUTE;
    expect(await ask()).toMatchObject({ read: systemTokens, write: 0 });
    // Four minutes after the read, eight after the write: the read renewed it.
    clock += 4 * MINUTE;
    expect(await ask()).toMatchObject({ read: systemTokens, write: 0 });
    clock += 5 * MINUTE;
    expect(await ask()).toMatchObject({ read: 0, write: systemTokens });
  });

  it('drops the least recently used prefix beyond its bound', async () => {
    const running = await serve(6, { maxEntries: 2 });
    const ask = async (topic: string): Promise<number | undefined> => {
      const messages = withSystem(filler(topic, 5000), { role: 'user', content: QUESTION });
      return inputOf((await generateText({ ...QUIET, model: claude(running), messages })).usage).read;
    };
    expect(await ask('alpha')).toBe(0);
    expect(await ask('beta')).toBe(0);
    expect(await ask('alpha')).toBe(systemTokens);
    // A third prefix pushes out beta, used longest ago, and keeps alpha.
    expect(await ask('gamma')).toBe(0);
    expect(await ask('alpha')).toBe(systemTokens);
    expect(await ask('beta')).toBe(0);
  });
});

describe('OpenAI prompt caching, automatic in 128-token blocks past 1024', () => {
  const QUESTION = 'What does notes.txt say?';
  const questionTokens = tokensOf({ content: QUESTION, role: 'user' });
  /** The largest cacheable length, 1024 + 128k, not past `tokens`; 0 under 1024. */
  const blockFloor = (tokens: number): number => (tokens < 1024 ? 0 : 1024 + Math.floor((tokens - 1024) / 128) * 128);

  function gpt(running: ModelServer): LanguageModel {
    return createOpenAI({ baseURL: `${running.url}/v1`, apiKey: 'x' }).chat('gpt-4o');
  }

  async function ask(running: ModelServer, system: string, question: string, promptCacheKey?: string): Promise<InputUsage> {
    const result = await generateText({
      ...QUIET,
      model: gpt(running),
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: question },
      ],
      ...(promptCacheKey === undefined ? {} : { providerOptions: { openai: { promptCacheKey } } }),
    });
    return inputOf(result.usage);
  }

  it('reads the longest cached block of the same prompt under the same key, and nothing under another', async () => {
    const running = await serve(3);
    const system = filler('the workspace', 6000);
    const total = tokensOf({ content: system, role: 'system' }) + questionTokens;
    expect(await ask(running, system, QUESTION, 'k1')).toMatchObject({ total, read: 0 });
    const again = await ask(running, system, QUESTION, 'k1');
    expect(again).toMatchObject({ total, read: blockFloor(total) });
    expect((again.read ?? 0) % 128).toBe(0);
    expect(await ask(running, system, QUESTION, 'k2')).toMatchObject({ total, read: 0 });
  });

  /** A system message of exactly `tokens` tokens. */
  const systemOf = (tokens: number): string => filler('the workspace', tokens * 4 - '{"content":"","role":"system"}'.length);

  it('reads a shared prefix to the last block its bytes reach, into the next message', async () => {
    const running = await serve(3);
    // 1151 tokens of system message, then the next message's opening `{"content":"` (3 tokens,
    // the same in both questions): the shared bytes reach the 1152 block.
    const system = systemOf(1151);
    expect(tokensOf({ content: system, role: 'system' })).toBe(1151);
    await ask(running, system, 'Alpha?');
    expect(await ask(running, system, 'Beta?')).toMatchObject({ read: 1152 });
    const streamed = streamText({
      ...QUIET,
      model: gpt(running),
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'Alpha?' },
      ],
    });
    expect(inputOf(await streamed.usage)).toMatchObject({ read: blockFloor(1151 + tokensOf({ content: 'Alpha?', role: 'user' })) });
  });

  it('reads no block whose bytes differ, even where the difference is inside its last message', async () => {
    const running = await serve(2);
    // 1147 tokens of system message: the 1152 block takes 5 tokens (20 bytes) of the
    // question, `{"content":"Alpha?",` against `{"content":"Beta?","`.
    const system = systemOf(1147);
    expect(tokensOf({ content: system, role: 'system' })).toBe(1147);
    await ask(running, system, 'Alpha?');
    expect(await ask(running, system, 'Beta?')).toMatchObject({ read: 1024 });
  });

  it('caches nothing under 1024 tokens', async () => {
    const running = await serve(2);
    const system = filler('the workspace', 3000);
    const total = tokensOf({ content: system, role: 'system' }) + questionTokens;
    expect(total).toBeLessThan(1024);
    expect(await ask(running, system, QUESTION)).toEqual({ total, noCache: total, read: 0, write: undefined });
    expect(await ask(running, system, QUESTION)).toEqual({ total, noCache: total, read: 0, write: undefined });
  });
});
