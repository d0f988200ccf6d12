import { APICallError } from '@ai-sdk/provider';
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart, LanguageModelV3StreamResult } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, RetryNotice } from '../chat-model.js';
import { abortableSleep, createChatModel } from './language-model-chat.js';
import type { ChatModelOptions } from './language-model-chat.js';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';

type Attempt = (options: LanguageModelV3CallOptions) => PromiseLike<LanguageModelV3StreamResult>;

/** A model whose every call is played by the next attempt; once they run out, a scripted answer. */
function playing(attempts: readonly Attempt[]): LanguageModelV3 & { calls: number } {
  const fallback = createScriptedLanguageModel([{ text: 'recovered', usage: { inputTokens: 3, outputTokens: 1 } }]);
  const model = {
    specificationVersion: 'v3' as const,
    provider: 'test',
    modelId: 'test',
    supportedUrls: {},
    calls: 0,
    doGenerate: () => Promise.reject(new Error('doGenerate is not used')),
    doStream: (options: LanguageModelV3CallOptions) => {
      const attempt = attempts[model.calls];
      model.calls += 1;
      return attempt === undefined ? fallback.doStream(options) : attempt(options);
    },
  };
  return model;
}

function streamOf(parts: readonly LanguageModelV3StreamPart[], keepOpen = false): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      if (!keepOpen) controller.close();
    },
  });
}

const REQUEST: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [] };
const noSleep = (): Promise<void> => Promise.resolve();
const STALLS_FAST: Partial<ChatModelOptions> = { retry: { stallTimeoutMs: 100 } };

function chat(model: LanguageModelV3, options: Partial<ChatModelOptions> = {}) {
  return createChatModel(model, { spec: 'test:model', sleep: noSleep, random: () => 0.25, retry: { stallTimeoutMs: 10_000 }, ...options });
}

describe('createChatModel', () => {
  it('abandons a model that never answers and ignores its abort signal, then retries', async () => {
    const model = playing([() => new Promise<never>(() => undefined)]);
    const notices: RetryNotice[] = [];
    const result = await chat(model, STALLS_FAST).call(REQUEST, { onRetry: (notice) => notices.push(notice) });
    expect(result).toMatchObject({ ok: true, turn: { text: 'recovered', attempts: 2 } });
    expect(notices.map((notice) => [notice.attempt, notice.error.kind, notice.delayMs])).toEqual([[1, 'stall', 125]]);
  });

  it('abandons a stream that goes silent after it started', async () => {
    let signal: AbortSignal | undefined;
    const model = playing([
      (options) => {
        signal = options.abortSignal;
        return Promise.resolve({ stream: streamOf([{ type: 'stream-start', warnings: [] }, { type: 'text-delta', id: '0', delta: 'par' }], true) });
      },
    ]);
    const result = await chat(model, STALLS_FAST).call(REQUEST);
    expect(result).toMatchObject({ ok: true, turn: { text: 'recovered', attempts: 2 } });
    expect(signal?.aborted).toBe(true);
  });

  it('retries an error the provider reports inside the stream, with growing backoff', async () => {
    const overloaded = (): PromiseLike<LanguageModelV3StreamResult> =>
      Promise.resolve({ stream: streamOf([{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]) });
    const notices: RetryNotice[] = [];
    const result = await chat(playing([overloaded, overloaded])).call(REQUEST, { onRetry: (notice) => notices.push(notice) });
    expect(result).toMatchObject({ ok: true, turn: { attempts: 3 } });
    expect(notices.map((notice) => [notice.attempt, notice.error.kind, notice.delayMs])).toEqual([
      [1, 'server', 125],
      [2, 'server', 250],
    ]);
  });

  it('retries a stream that ends before its finish part', async () => {
    const model = playing([() => Promise.resolve({ stream: streamOf([{ type: 'text-delta', id: '0', delta: 'half an ans' }]) })]);
    const notices: RetryNotice[] = [];
    const result = await chat(model).call(REQUEST, { onRetry: (notice) => notices.push(notice) });
    expect(result).toMatchObject({ ok: true, turn: { text: 'recovered' } });
    expect(notices[0]?.error.kind).toBe('network');
  });

  it('does not retry a rejected request', async () => {
    const model = playing([
      () =>
        Promise.reject(
          new APICallError({ message: 'Unknown parameter: foo', url: 'u', requestBodyValues: {}, statusCode: 400 }),
        ),
    ]);
    const result = await chat(model).call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'bad-request', status: 400 } });
    expect(model.calls).toBe(1);
  });

  it('honours a retry-after date against the injected clock', async () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    const model = playing([
      () =>
        Promise.reject(
          new APICallError({
            message: 'busy',
            url: 'u',
            requestBodyValues: {},
            statusCode: 503,
            responseHeaders: { 'retry-after': new Date(now + 45_000).toUTCString() },
          }),
        ),
    ]);
    const sleeps: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      sleeps.push(ms);
      return Promise.resolve();
    };
    const result = await chat(model, { sleep, now: () => now }).call(REQUEST);
    expect(result.ok).toBe(true);
    expect(sleeps).toEqual([45_000]);
  });

  it('does not call the model when the signal is already aborted', async () => {
    const model = playing([]);
    const controller = new AbortController();
    controller.abort();
    const result = await chat(model).call(REQUEST, { signal: controller.signal });
    expect(result).toMatchObject({ ok: false, attempts: 0, error: { kind: 'aborted' } });
    expect(model.calls).toBe(0);
  });

  it('stops reading and reports the cancellation when aborted mid-stream', async () => {
    const controller = new AbortController();
    const model = playing([
      () => {
        setTimeout(() => controller.abort(), 10);
        return Promise.resolve({ stream: streamOf([{ type: 'text-delta', id: '0', delta: 'thinking' }], true) });
      },
    ]);
    const result = await chat(model).call(REQUEST, { signal: controller.signal });
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'aborted', retryable: false } });
    expect(model.calls).toBe(1);
  });

  it('prices a turn when given a price and reports null without one', async () => {
    const priced = createChatModel(createScriptedLanguageModel([{ text: 'x', usage: { inputTokens: 2_000, outputTokens: 1_000 } }]), {
      spec: 'priced',
      price: { inputPerMTok: 1, outputPerMTok: 10 },
    });
    expect(priced.spec).toBe('priced');
    const result = await priced.call(REQUEST);
    expect(result).toMatchObject({ ok: true, turn: { costUsd: 0.012 } });
    const unpriced = createChatModel(createScriptedLanguageModel([{ text: 'x' }]), { spec: 'unpriced' });
    expect(await unpriced.call(REQUEST)).toMatchObject({ ok: true, turn: { costUsd: null } });
  });
});

describe('abortableSleep', () => {
  it('ends early when its signal aborts', async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(600_000, controller.signal);
    controller.abort();
    await expect(sleeping).resolves.toBeUndefined();
    await expect(abortableSleep(600_000, controller.signal)).resolves.toBeUndefined();
  });
});
