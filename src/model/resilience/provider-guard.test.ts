import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest, ProviderNotice } from '../chat-model.js';
import { startModelServer, type Fault, type ModelServer } from '../server/model-server.js';
import { unusedPort } from '../testing/unused-port.js';
import { createManualClock, settle, type ManualClock } from '../testing/manual-clock.js';
import { createProviderGuards, type ProviderGuardConfig, type ProviderGuards } from './provider-guard.js';
import { resolveModel } from '../registry.js';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';

/** The gate and the breaker around real HTTP calls through the openai-compatible adapter. */
const REQUEST: ModelRequest = { messages: [{ role: 'user', content: 'Say hi.' }], tools: [] };

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

interface Setup {
  readonly running: ModelServer;
  readonly clock: ManualClock;
  readonly guards: ProviderGuards;
  readonly baseUrl: string;
  model(name: string): ChatModel;
}

/** A server answering `answers` turns after `faults`; models that wait on a clock that moves only when told. */
async function setUp(faults: Fault[], answers: number, config: ProviderGuardConfig = {}): Promise<Setup> {
  const running = await startModelServer({
    model: createScriptedLanguageModel(Array.from({ length: answers }, (_, index) => ({ text: `answer ${index + 1}` }))),
    faults,
  });
  server = running;
  const clock = createManualClock();
  const guards = createProviderGuards(config, clock);
  const baseUrl = `${running.url}/v1`;
  const model = (name: string): ChatModel => {
    const resolved = resolveModel(`openai-compatible:${name}`, {
      baseUrl,
      env: {},
      providers: guards,
      retry: { maxAttempts: 3, stallTimeoutMs: 10_000 },
      random: () => 0.5,
      sleep: clock.sleep,
      now: clock.now,
    });
    if (!resolved.ok) throw new Error(resolved.error);
    return resolved.model;
  };
  return { running, clock, guards, baseUrl, model };
}

describe('provider guards over HTTP', () => {
  it('opens the circuit after failures in a row, fails fast without calling the provider, and closes after a trial', async () => {
    const { running, clock, baseUrl, model } = await setUp([], 2, { breaker: { failureThreshold: 3, coolDownMs: 30_000 } });
    const chat = model('coder');
    // A provider that has worked: its failures from now on are an outage, worth waiting out.
    expect(await chat.call(REQUEST)).toMatchObject({ ok: true, turn: { text: 'answer 1' } });
    running.faults.push({ status: 500 }, { resetConnection: true }, { status: 502 });
    const notices: ProviderNotice[] = [];
    const first = chat.call(REQUEST, { onProvider: (notice) => notices.push(notice), onRetry: () => setImmediate(() => clock.advance(1_000)) });
    const failed = await first;
    expect(failed).toMatchObject({ ok: false, attempts: 3, error: { kind: 'server', status: 502 } });
    expect(notices).toEqual([
      {
        type: 'circuit-opened',
        provider: `openai-compatible at ${baseUrl}`,
        failures: 3,
        reason: expect.stringMatching(/^server: The provider failed to answer \(HTTP 502/),
        retryInMs: 30_000,
      },
    ]);

    const refused = await chat.call(REQUEST);
    expect(refused).toMatchObject({ ok: false, attempts: 0, error: { kind: 'circuit-open', retryable: true, retryAfterMs: 30_000 } });
    if (refused.ok) throw new Error('expected a refusal');
    expect(refused.error.message).toContain(`colony stopped calling openai-compatible at ${baseUrl} after 3 failure(s) in a row`);
    expect(refused.error.message).toMatch(/it will try again at \d{4}-\d\d-\d\dT[\d:.]+Z \(in 30 s\)/);
    expect(running.requests).toHaveLength(4);

    clock.advance(30_000);
    const closing: ProviderNotice[] = [];
    const trial = await chat.call(REQUEST, { onProvider: (notice) => closing.push(notice) });
    expect(trial).toMatchObject({ ok: true, turn: { text: 'answer 2' } });
    expect(closing).toEqual([{ type: 'circuit-closed', provider: `openai-compatible at ${baseUrl}`, openMs: 30_000 }]);
  });

  it("shares one gate among a provider address's models: a 429 halves it and its retry-after holds them all", async () => {
    const { running, clock, guards, baseUrl, model } = await setUp([{ status: 429, retryAfterSeconds: 2 }], 2);
    const [first, second] = [model('coder'), model('planner')];
    const notices: ProviderNotice[] = [];
    const retried = first.call(REQUEST, { onProvider: (notice) => notices.push(notice) });
    await until(() => notices.length > 0);
    expect(notices).toEqual([
      { type: 'limited', provider: `openai-compatible at ${baseUrl}`, from: 32, to: 16, reason: 'rate limited (HTTP 429)', holdMs: 2_000 },
    ]);
    // Another model of the same provider is held back too, not only the caller.
    const held = second.call(REQUEST);
    await settle();
    expect(running.requests).toHaveLength(1);
    clock.advance(2_000);
    expect(await retried).toMatchObject({ ok: true, turn: { attempts: 2 } });
    expect(await held).toMatchObject({ ok: true, turn: { attempts: 1 } });
    expect(running.requests).toHaveLength(3);
    expect(guards.guardFor('openai-compatible', baseUrl).gate.state()).toMatchObject({ limit: 16, inFlight: 0 });
    // Another address has a gate of its own.
    expect(guards.guardFor('openai-compatible', 'http://127.0.0.1:1/v1').gate.state().limit).toBe(32);
  });
});

describe('a provider that has never answered', () => {
  it('fails its calls with an unreachable error naming the address, the last error and what to check', async () => {
    const baseUrl = `http://127.0.0.1:${await unusedPort()}/v1`;
    const guards = createProviderGuards({ breaker: { failureThreshold: 2 } });
    const model = immediateRetries(baseUrl, guards);
    const notices: ProviderNotice[] = [];
    // Two refused connections open the circuit, which refuses the third attempt.
    const failed = await model.call(REQUEST, { onProvider: (notice) => notices.push(notice) });
    expect(failed).toMatchObject({ ok: false, attempts: 2, error: { kind: 'unreachable', retryable: false, status: null } });
    if (failed.ok) throw new Error('expected a failure');
    expect(failed.error.message).toContain(`openai-compatible at ${baseUrl} has not answered once since this run started`);
    expect(failed.error.message).toMatch(/The last error: network: The connection to the provider failed: .*ECONNREFUSED/);
    expect(failed.error.message).toContain('Check that --base-url is the address of the server');
    expect(notices.map((notice) => notice.type)).toEqual(['circuit-opened']);
    expect(guards.guardFor('openai-compatible', baseUrl).hasAnswered()).toBe(false);

    // While the circuit is open, later calls fail at once, with the same explanation.
    const refused = await model.call(REQUEST);
    expect(refused).toMatchObject({ ok: false, attempts: 0, error: { kind: 'unreachable' } });
    if (refused.ok) throw new Error('expected a failure');
    expect(refused.error.message).toContain('ECONNREFUSED');
  });

  it.each([
    ['openai-compatible:coder', 6000],
    ['openai-compatible:coder', 1],
    ['anthropic:claude-sonnet-4-5', 6000],
  ])('says %s at a port fetch refuses (%i) is one, at once and without retrying', async (spec, port) => {
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const guards = createProviderGuards();
    const resolved = resolveModel(spec, { baseUrl, env: { ANTHROPIC_API_KEY: 'key' }, providers: guards, retry: { maxAttempts: 3 }, sleep: async () => undefined });
    if (!resolved.ok) throw new Error(resolved.error);
    const failed = await resolved.model.call(REQUEST);
    expect(failed).toMatchObject({ ok: false, attempts: 1, error: { kind: 'unreachable', retryable: false } });
    if (failed.ok) throw new Error('expected a failure');
    expect(failed.error.message).toContain(`Node's fetch refuses to connect to port ${port}`);
    expect(failed.error.message).toContain('Serve the API on another port and pass that address in --base-url.');
    expect(failed.error.message).not.toMatch(/could not be read/);
    // The refusal is the same for every later call, and just as quick.
    expect(await resolved.model.call(REQUEST)).toMatchObject({ ok: false, attempts: 1, error: { kind: 'unreachable' } });
  });

  it('counts a server that accepts connections but never responds as never having answered', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const address = silent.address();
      if (address === null || typeof address === 'string') throw new Error('the silent server has no port');
      const baseUrl = `http://127.0.0.1:${address.port}/v1`;
      const resolved = resolveModel('openai-compatible:coder', {
        baseUrl,
        env: {},
        providers: createProviderGuards(),
        retry: { maxAttempts: 2, stallTimeoutMs: 50 },
        sleep: async () => undefined,
      });
      if (!resolved.ok) throw new Error(resolved.error);
      const failed = await resolved.model.call(REQUEST);
      expect(failed).toMatchObject({ ok: false, attempts: 2, error: { kind: 'unreachable' } });
      if (failed.ok) throw new Error('expected a failure');
      expect(failed.error.message).toContain('The last error: stall: The provider went silent for more than 50 ms');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('keeps the waiting errors once the provider has answered anything, even a refusal', async () => {
    const running = await startModelServer({ model: createScriptedLanguageModel([]), faults: [{ status: 401 }] });
    server = running;
    const baseUrl = `${running.url}/v1`;
    const guards = createProviderGuards();
    const model = immediateRetries(baseUrl, guards);
    expect(await model.call(REQUEST)).toMatchObject({ ok: false, attempts: 1, error: { kind: 'auth', status: 401 } });
    expect(guards.guardFor('openai-compatible', baseUrl).hasAnswered()).toBe(true);

    await running.close();
    server = null;
    const down = await model.call(REQUEST);
    expect(down).toMatchObject({ ok: false, attempts: 3, error: { kind: 'network', retryable: true } });
  });
});

describe('a provider that has never succeeded', () => {
  /** A server that answers every generation request with `fault`; a model with the default retries, whose waits are counted, not slept. */
  async function failingFromTheStart(fault: Fault, retry: { maxAttempts?: number } = {}) {
    const running = await startModelServer({ model: createScriptedLanguageModel([{ text: 'hi' }]) });
    server = running;
    running.storm(fault, 600_000);
    const clock = createManualClock();
    const guards = createProviderGuards({}, clock);
    const baseUrl = `${running.url}/v1`;
    const waits: number[] = [];
    const resolved = resolveModel('openai-compatible:coder', {
      baseUrl,
      env: {},
      providers: guards,
      retry,
      // The longest backoff the jitter can draw.
      random: () => 0.999,
      sleep: (ms) => {
        waits.push(ms);
        clock.advance(ms);
        return Promise.resolve();
      },
      now: clock.now,
    });
    if (!resolved.ok) throw new Error(resolved.error);
    return { running, baseUrl, guard: guards.guardFor('openai-compatible', baseUrl), model: resolved.model, waits };
  }

  it('fails a server that answers only 500s within seconds, naming --base-url and its logs, and every later call at once', async () => {
    const { running, baseUrl, guard, model, waits } = await failingFromTheStart({ status: 500 });
    const failed = await model.call(REQUEST);
    // Five 500s open the circuit, which refuses the sixth attempt.
    expect(failed).toMatchObject({ ok: false, attempts: 5, error: { kind: 'unreachable', retryable: false, status: 500 } });
    if (failed.ok) throw new Error('expected a failure');
    expect(failed.error.message).toContain(`openai-compatible at ${baseUrl} has answered every call since this run started with a server error`);
    expect(failed.error.message).toContain('The last error: server: The provider failed to answer (HTTP 500');
    expect(failed.error.message).toContain('Check that --base-url is the address of the model API');
    expect(failed.error.message).toContain("look in the server's logs");
    expect(running.requests).toHaveLength(5);
    // Seconds, not minutes, at the longest the jitter allows.
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(16_000);
    expect([guard.hasAnswered(), guard.hasSucceeded()]).toEqual([true, false]);

    const refused = await model.call(REQUEST);
    expect(refused).toMatchObject({ ok: false, attempts: 0, error: { kind: 'unreachable', status: 500 } });
    expect(running.requests).toHaveLength(5);
  });

  it('keeps waiting on 503s, which a server answers while it starts', async () => {
    const { model } = await failingFromTheStart({ status: 503 }, { maxAttempts: 3 });
    expect(await model.call(REQUEST)).toMatchObject({ ok: false, attempts: 3, error: { kind: 'server', status: 503, retryable: true } });
  });
});

/** A model at `baseUrl` whose three attempts follow each other without a wait. */
function immediateRetries(baseUrl: string, guards: ProviderGuards): ChatModel {
  const resolved = resolveModel('openai-compatible:coder', {
    baseUrl,
    env: {},
    providers: guards,
    retry: { maxAttempts: 3 },
    sleep: async () => undefined,
  });
  if (!resolved.ok) throw new Error(resolved.error);
  return resolved.model;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
