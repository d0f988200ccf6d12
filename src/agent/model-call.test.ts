import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../events/event-types.js';
import type { ChatModel, ModelRequest } from '../model/chat-model.js';
import { startModelServer, type ModelServer } from '../model/server/model-server.js';
import { unusedPort } from '../model/testing/unused-port.js';
import { createProviderGuards } from '../model/resilience/provider-guard.js';
import { resolveModel } from '../model/registry.js';
import { createScriptedLanguageModel } from '../model/testing/scripted-language-model.js';
import type { AgentRecorder } from './types.js';
import { callModelForStep, type ParkingOptions } from './model-call.js';

/**
 * Parking decided over real HTTP: an address that has never answered, or never once succeeded,
 * fails the call with a clear error, while a provider that answered once and then went away
 * parks the agent.
 */
const REQUEST: ModelRequest = { messages: [{ role: 'user', content: 'Say hi.' }], tools: [] };

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('callModelForStep against a provider that cannot be reached', () => {
  it('fails the call at once, without parking, when the provider has never answered', async () => {
    const baseUrl = `http://127.0.0.1:${await unusedPort()}/v1`;
    const events: EventBody[] = [];
    const parks: number[] = [];
    const outcome = await callModelForStep({
      model: modelAt(baseUrl),
      request: REQUEST,
      step: 1,
      signal: new AbortController().signal,
      recorder: recorderInto(events),
      parking: { sleep: async (ms) => void parks.push(ms) },
    });
    expect(outcome.result).toMatchObject({ ok: false, attempts: 2, error: { kind: 'unreachable' } });
    expect(parks).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['model.requested', 'model.retried', 'model.failed']);
    const failed = events.at(-1);
    if (failed?.type !== 'model.failed') throw new Error('expected model.failed last');
    expect(failed.data.message).toContain(`openai-compatible at ${baseUrl} has not answered once since this run started`);
    expect(failed.data.message).toContain('ECONNREFUSED');
    expect(failed.data.message).toContain('--base-url');
  });

  it('fails the call at once, without parking, when the provider has answered only with server errors', async () => {
    const running = await startModelServer({ model: createScriptedLanguageModel([{ text: 'hi' }]) });
    server = running;
    running.storm({ status: 500 }, 600_000);
    const events: EventBody[] = [];
    const parks: number[] = [];
    const outcome = await callModelForStep({
      model: modelAt(`${running.url}/v1`),
      request: REQUEST,
      step: 1,
      signal: new AbortController().signal,
      recorder: recorderInto(events),
      parking: { sleep: async (ms) => void parks.push(ms) },
    });
    expect(outcome.result).toMatchObject({ ok: false, attempts: 2, error: { kind: 'unreachable', status: 500 } });
    expect(parks).toEqual([]);
    expect(events.map((event) => event.type)).toEqual(['model.requested', 'model.retried', 'model.failed']);
    const failed = events.at(-1);
    if (failed?.type !== 'model.failed') throw new Error('expected model.failed last');
    expect(failed.data.message).toContain('--base-url');
    expect(failed.data.message).toContain("the server's logs");
  });

  it('parks the agent when a provider that answered before goes away', async () => {
    const running = await startModelServer({ model: createScriptedLanguageModel([{ text: 'hi' }]) });
    server = running;
    const model = modelAt(`${running.url}/v1`);
    const controller = new AbortController();
    const events: EventBody[] = [];
    const parking: ParkingOptions = {
      // The park itself is not the point: the first one stops the run, which ends it.
      sleep: async () => controller.abort(),
    };
    const call = (step: number) =>
      callModelForStep({ model, request: REQUEST, step, signal: controller.signal, recorder: recorderInto(events), parking });

    expect((await call(1)).result).toMatchObject({ ok: true, turn: { text: 'hi' } });
    await running.close();
    server = null;

    expect((await call(2)).result).toMatchObject({ ok: false, error: { kind: 'aborted' } });
    const afterAnswer = events.slice(events.findIndex((event) => event.type === 'model.requested' && event.data.step === 2));
    expect(afterAnswer.map((event) => event.type)).toEqual(['model.requested', 'model.retried', 'agent.parked']);
    expect(afterAnswer.at(-1)).toMatchObject({ type: 'agent.parked', data: { step: 2, kind: 'network', attempts: 2 } });
  });

  it('stops waiting when told to after a park, without calling the provider again', async () => {
    const running = await startModelServer({ model: createScriptedLanguageModel([{ text: 'hi' }]) });
    server = running;
    const model = modelAt(`${running.url}/v1`);
    const events: EventBody[] = [];
    const call = (step: number, stopWaiting: () => string | null) =>
      callModelForStep({ model, request: REQUEST, step, signal: new AbortController().signal, recorder: recorderInto(events), parking: { sleep: async () => undefined }, stopWaiting });
    expect((await call(1, () => null)).result).toMatchObject({ ok: true });
    await running.close();
    server = null;

    let asked = 0;
    const outcome = await call(2, () => (++asked === 2 ? "stopped: the run's time limit of 1 hour passed" : null));
    expect(outcome.stopped).toBe("stopped: the run's time limit of 1 hour passed");
    expect(outcome.result).toMatchObject({ ok: false, error: { kind: 'network' } });
    const afterAnswer = events.slice(events.findIndex((event) => event.type === 'model.requested' && event.data.step === 2));
    // Parked, resumed and tried once more; parked again, and told to stop: no third request.
    expect(afterAnswer.map((event) => event.type)).toEqual([
      'model.requested',
      'model.retried',
      'agent.parked',
      'agent.unparked',
      'model.requested',
      'model.retried',
      'agent.parked',
    ]);
  });
});

/** A model at `baseUrl` with a guard of its own and two attempts per call, the second without a wait. */
function modelAt(baseUrl: string): ChatModel {
  const resolved = resolveModel('openai-compatible:coder', {
    baseUrl,
    env: {},
    providers: createProviderGuards(),
    retry: { maxAttempts: 2 },
    sleep: async () => undefined,
  });
  if (!resolved.ok) throw new Error(resolved.error);
  return resolved.model;
}

function recorderInto(events: EventBody[]): AgentRecorder {
  return { record: (event) => void events.push(event), flush: () => undefined };
}
