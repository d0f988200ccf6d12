import { afterEach, describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest, RetryNotice } from '../chat-model.js';
import { startModelServer } from '../server/model-server.js';
import type { Fault, ModelServer } from '../server/model-server.js';
import type { Sleep } from '../providers/language-model-chat.js';
import { createManualClock } from '../testing/manual-clock.js';
import { createProviderGuards } from './provider-guard.js';
import { resolveModel } from '../registry.js';
import type { RetryPolicy } from './retry.js';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';

/** Failure handling of each hosted provider's adapter, against real HTTP faults. */
interface Provider {
  readonly spec: string;
  readonly keyEnv: string;
  /** How this provider's API words "the prompt is too long", as a raw error body. */
  readonly contextLengthBody: string;
}

const PROVIDERS: readonly Provider[] = [
  {
    spec: 'openai:gpt-5',
    keyEnv: 'OPENAI_API_KEY',
    contextLengthBody: JSON.stringify({
      error: {
        message: "This model's maximum context length is 400000 tokens. However, your messages resulted in 412000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    }),
  },
  {
    spec: 'anthropic:claude-sonnet-4-5',
    keyEnv: 'ANTHROPIC_API_KEY',
    contextLengthBody: JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 212000 tokens > 200000 maximum' },
    }),
  },
  {
    spec: 'openai-compatible:qwen3-coder',
    keyEnv: 'LOCAL_LLM_KEY',
    contextLengthBody: JSON.stringify({
      error: { message: 'Requested 140000 tokens, too many tokens for this model (limit 131072).', type: 'BadRequestError', code: 400 },
    }),
  },
];

const SECRET = 'sk-secret-value-123';
/** What a login page in front of an API answers, whatever was asked. */
const LOGIN_PAGE = '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>\n  Sign in - Example Corp\n</title></head><body><form>...</form></body></html>';
const REQUEST: ModelRequest = { messages: [{ role: 'user', content: 'Say hi.' }], tools: [] };

describe.each(PROVIDERS)('retries through $spec', (provider) => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  /** A model behind a server that plays `faults` first; sleeps are recorded, not slept. */
  async function setUp(
    faults: Fault[],
    options: { retry?: Partial<RetryPolicy>; realSleep?: boolean } = {},
  ): Promise<{ model: ChatModel; running: ModelServer; sleeps: number[] }> {
    const scripted = createScriptedLanguageModel([{ text: 'hi' }]);
    const running = await startModelServer({ model: scripted, faults });
    server = running;
    const sleeps: number[] = [];
    // Recorded, not slept, but time moves on for the provider's gate, which a retry-after holds.
    const clock = createManualClock();
    const recordSleep: Sleep = (ms) => {
      sleeps.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    };
    const realSleep = options.realSleep === true;
    const resolved = resolveModel(provider.spec, {
      baseUrl: `${running.url}/v1`,
      apiKeyEnv: provider.keyEnv,
      env: { [provider.keyEnv]: SECRET },
      retry: { stallTimeoutMs: 10_000, ...options.retry },
      random: () => 0.5,
      sleep: realSleep ? undefined : recordSleep,
      providers: realSleep ? createProviderGuards() : createProviderGuards({}, clock),
    });
    if (!resolved.ok) throw new Error(resolved.error);
    return { model: resolved.model, running, sleeps };
  }

  async function retriedOnceAfter(fault: Fault, retry: Partial<RetryPolicy> = {}): Promise<RetryNotice[]> {
    const { model, running } = await setUp([fault], { retry });
    const notices: RetryNotice[] = [];
    const result = await model.call(REQUEST, { onRetry: (notice) => notices.push(notice) });
    expect(result).toMatchObject({ ok: true, turn: { text: 'hi', attempts: 2 } });
    expect(running.requests).toHaveLength(2);
    return notices;
  }

  it('waits at least as long as a 429 asks before retrying', async () => {
    const { model, sleeps } = await setUp([{ status: 429, retryAfterSeconds: 7 }]);
    const notices: RetryNotice[] = [];
    const result = await model.call(REQUEST, { onRetry: (notice) => notices.push(notice) });
    expect(result).toMatchObject({ ok: true, turn: { attempts: 2 } });
    expect(notices).toHaveLength(1);
    expect(notices[0]?.error).toMatchObject({ kind: 'rate-limit', status: 429, retryAfterMs: 7000, retryable: true });
    expect(sleeps).toEqual([7000]);
  });

  it('retries a 500', async () => {
    const notices = await retriedOnceAfter({ status: 500 });
    expect(notices.map((notice) => [notice.error.kind, notice.error.status])).toEqual([['server', 500]]);
    // random() = 0.5 of the first ceiling, 500 ms.
    expect(notices[0]?.delayMs).toBe(250);
  });

  it('retries a reset connection', async () => {
    const notices = await retriedOnceAfter({ resetConnection: true });
    expect(notices.map((notice) => notice.error.kind)).toEqual(['network']);
  });

  it('abandons a stalled stream and retries', async () => {
    const notices = await retriedOnceAfter({ stallAfterFirstChunk: true }, { stallTimeoutMs: 200 });
    expect(notices.map((notice) => notice.error.kind)).toEqual(['stall']);
  });

  it('retries an unreadable answer, but only a few times', async () => {
    const notices = await retriedOnceAfter({ garbage: true });
    expect(notices.map((notice) => notice.error.kind)).toEqual(['garbage']);

    const { model, running } = await setUp([{ garbage: true }, { garbage: true }, { garbage: true }, { garbage: true }]);
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 3, error: { kind: 'garbage' } });
    expect(running.requests).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    const { model, running } = await setUp([{ status: 400 }]);
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'bad-request', status: 400, retryable: false } });
    expect(running.requests).toHaveLength(1);
  });

  it('recognises a prompt that no longer fits the context window and does not retry it', async () => {
    const { model, running } = await setUp([{ status: 400, body: provider.contextLengthBody }]);
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'context-length', retryable: false } });
    expect(running.requests).toHaveLength(1);
  });

  it('does not retry a refused key, names the variable and never shows the key', async () => {
    const { model, running } = await setUp([{ status: 401 }]);
    const result = await model.call(REQUEST);
    if (result.ok) throw new Error('expected a failure');
    expect(result.error).toMatchObject({ kind: 'auth', status: 401, retryable: false });
    expect(result.error.message).toContain(provider.keyEnv);
    expect(result.error.message).toContain('--api-key-env');
    expect(result.error.message).not.toContain(SECRET);
    expect(running.requests).toHaveLength(1);
  });

  it.each([200, 401, 404])('says a web page answered with %i is one, with its title and what to check, and does not retry it', async (status) => {
    const { model, running } = await setUp([{ status, body: LOGIN_PAGE, contentType: 'text/html; charset=utf-8' }]);
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'unreachable', status, retryable: false } });
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.message).toBe(
      `The server at ${running.url}/v1 answered with an HTML page (HTTP ${status}, "Sign in - Example Corp"), not a model's answer: ` +
        "is --base-url the API's address (often ending in /v1)? A proxy or a login page between colony and the API answers like this too.",
    );
    expect(running.requests).toHaveLength(1);
  });

  it("retries a gateway's error page like any 502, and says it was a page", async () => {
    const notices = await retriedOnceAfter({ status: 502, body: '<html><head><title>502 Bad Gateway</title></head></html>', contentType: 'text/html' });
    expect(notices.map((notice) => [notice.error.kind, notice.error.status])).toEqual([['server', 502]]);
    expect(notices[0]?.error.message).toMatch(/\(HTTP 502: .*, an HTML page\)/);
  });

  it("takes a proxy's 413 page for what it says, a request too large, not for a wrong address", async () => {
    const { model } = await setUp([{ status: 413, body: '<html><title>413 Request Entity Too Large</title></html>', contentType: 'text/html' }]);
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'bad-request', status: 413, retryable: false } });
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.message).toMatch(/\(HTTP 413: .*, an HTML page\)/);
  });

  it('gives up after maxAttempts with the last error and the attempt count, once the provider has worked', async () => {
    const { model, running, sleeps } = await setUp([], { retry: { maxAttempts: 3 } });
    expect(await model.call(REQUEST)).toMatchObject({ ok: true });
    running.faults.push({ status: 503 }, { status: 502 }, { status: 500 }, { status: 500 });
    const result = await model.call(REQUEST);
    expect(result).toMatchObject({ ok: false, attempts: 3, error: { kind: 'server', status: 500, retryable: true } });
    expect(running.requests).toHaveLength(4);
    // Ceilings 500 and 1000 ms, at random() = 0.5.
    expect(sleeps).toEqual([250, 500]);
  });

  it('stops waiting and reports the cancellation when aborted during a backoff wait', async () => {
    // The default, real sleep: without the abort this would wait ten minutes.
    const { model, running } = await setUp([{ status: 429, retryAfterSeconds: 600 }], { realSleep: true });
    const controller = new AbortController();
    const result = await model.call(REQUEST, { signal: controller.signal, onRetry: () => controller.abort() });
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'aborted', retryable: false } });
    expect(running.requests).toHaveLength(1);
  });

  it('reports a cancellation, not a stall, when aborted while the stream is silent', async () => {
    const { model, running } = await setUp([{ stallAfterFirstChunk: true }]);
    const controller = new AbortController();
    const pending = model.call(REQUEST, { signal: controller.signal });
    await until(() => running.requests.length === 1);
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, attempts: 1, error: { kind: 'aborted' } });
  });
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
