import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedLanguageModel } from '../testing/scripted-language-model.js';
import type { ScriptedTurn } from '../testing/scripted-language-model.js';
import { startModelServer } from './model-server.js';
import type { Fault, ModelServer } from './model-server.js';

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function serve(turns: readonly ScriptedTurn[], faults: Fault[] = []): Promise<ModelServer> {
  server = await startModelServer({ model: createScriptedLanguageModel(turns, { modelId: 'test-model' }), faults, now: () => 1_700_000_000_000 });
  return server;
}

async function post(running: ModelServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${running.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The `data:` payloads of a server-sent event stream. */
function sseData(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length));
}

const TOOL_TURN: ScriptedTurn = {
  text: 'Reading it now.',
  toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'notes.txt' } }],
  usage: { inputTokens: 50, outputTokens: 12, cachedInputTokens: 20 },
};

describe('OpenAI chat completions', () => {
  const request = {
    model: 'test-model',
    messages: [
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'What is in notes.txt?' }] },
    ],
    tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
  };

  it('answers a whole completion with tool calls and usage', async () => {
    const running = await serve([TOOL_TURN]);
    const response = await post(running, '/v1/chat/completions', request);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: 'chatcmpl-000001',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Reading it now.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62, prompt_tokens_details: { cached_tokens: 20 } },
    });
  });

  it('streams chunks whose pieces add up to the answer, then usage, then [DONE]', async () => {
    const running = await serve([TOOL_TURN]);
    const response = await post(running, '/v1/chat/completions', {
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const payloads = sseData(await response.text());
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((payload) => JSON.parse(payload) as Chunk);
    let text = '';
    let argumentsText = '';
    for (const chunk of chunks) {
      const delta = chunk.choices[0]?.delta;
      text += delta?.content ?? '';
      for (const call of delta?.tool_calls ?? []) argumentsText += call.function.arguments ?? '';
    }
    expect(text).toBe('Reading it now.');
    expect(argumentsText).toBe('{"path":"notes.txt"}');
    expect(chunks.filter((chunk) => (chunk.choices[0]?.delta?.content ?? '').length > 0).length).toBeGreaterThan(1);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 12 } });
  });

  it('lists the model it serves', async () => {
    const running = await serve([]);
    const response = await fetch(`${running.url}/v1/models`);
    expect(await response.json()).toMatchObject({ object: 'list', data: [{ id: 'test-model', object: 'model' }] });
  });

  it('answers malformed requests with a 400 in its error format, and keeps serving', async () => {
    const running = await serve([{ text: 'still here' }]);
    const notJson = await post(running, '/v1/chat/completions', '{"model": ');
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('not valid JSON') } });

    const noMessages = await post(running, '/v1/chat/completions', { model: 'test-model' });
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as ErrorBody).error.message).toContain('messages');

    const orphanResult = await post(running, '/v1/chat/completions', {
      model: 'test-model',
      messages: [{ role: 'tool', tool_call_id: 'call_404', content: 'x' }],
    });
    expect(orphanResult.status).toBe(400);
    expect(((await orphanResult.json()) as ErrorBody).error.message).toContain('call_404');

    const image = await post(running, '/v1/chat/completions', {
      model: 'test-model',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }],
    });
    expect(((await image.json()) as ErrorBody).error.message).toContain('image_url');

    const fine = await post(running, '/v1/chat/completions', { model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(fine.status).toBe(200);
  });

  it('answers unknown paths with 404 and wrong methods with 405', async () => {
    const running = await serve([]);
    expect((await fetch(`${running.url}/v1/embeddings`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${running.url}/v1/chat/completions`)).status).toBe(405);
  });

  it('answers 500 in its error format when the model fails', async () => {
    const running = await serve([]);
    const response = await post(running, '/v1/chat/completions', { model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { type: 'server_error', message: expect.stringContaining('scripted model') } });
  });
});

describe('Anthropic messages', () => {
  const request = {
    model: 'claude-test',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [{ role: 'user', content: 'What is in notes.txt?' }],
    tools: [{ name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object' } }],
  };

  it('answers a whole message with tool_use blocks and usage', async () => {
    const running = await serve([TOOL_TURN]);
    const response = await post(running, '/v1/messages', request);
    expect(await response.json()).toEqual({
      id: 'msg_000001',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [
        { type: 'text', text: 'Reading it now.' },
        { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'notes.txt' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 12 },
    });
  });

  it('streams the documented event sequence', async () => {
    const running = await serve([TOOL_TURN]);
    const response = await post(running, '/v1/messages', { ...request, stream: true });
    const events = sseData(await response.text()).map((payload) => JSON.parse(payload) as AnthropicEvent);
    expect([...new Set(events.map((event) => event.type))]).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = events.map((event) => (event.delta?.type === 'text_delta' ? event.delta.text : '')).join('');
    const json = events.map((event) => (event.delta?.type === 'input_json_delta' ? event.delta.partial_json : '')).join('');
    expect(text).toBe('Reading it now.');
    expect(json).toBe('{"path":"notes.txt"}');
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: 12 },
    });
  });

  it('turns tool results and errors into the prompt the model sees', async () => {
    const model = createScriptedLanguageModel([{ text: 'ok' }]);
    server = await startModelServer({ model });
    await post(server, '/v1/messages', {
      model: 'claude-test',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'Read it.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'no such file' }], is_error: true },
            { type: 'text', text: 'Try again.' },
            { type: 'text', text: 'Handoff from task t2' },
          ],
        },
      ],
    });
    expect(model.calls[0]?.options.prompt.slice(2)).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_1', toolName: 'read_file', output: { type: 'error-text', value: 'no such file' } },
        ],
      },
      // Two messages the client folded into one turn stay two.
      { role: 'user', content: [{ type: 'text', text: 'Try again.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Handoff from task t2' }] },
    ]);
  });

  it('answers malformed requests with a 400 in its error format', async () => {
    const running = await serve([]);
    const missingMaxTokens = await post(running, '/v1/messages', { model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    expect(missingMaxTokens.status).toBe(400);
    const body = (await missingMaxTokens.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toContain('max_tokens');
  });
});

describe('faults', () => {
  const chat = { model: 'test-model', messages: [{ role: 'user', content: 'hi' }] };

  it('plays an HTTP error with retry-after, a verbatim body, then answers normally', async () => {
    const running = await serve([{ text: 'finally' }], [{ status: 429, retryAfterSeconds: 3 }, { status: 400, body: '{"custom":true}' }]);
    const limited = await post(running, '/v1/chat/completions', chat);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toMatchObject({ error: { type: 'rate_limit_error' } });
    const verbatim = await post(running, '/v1/chat/completions', chat);
    expect(await verbatim.text()).toBe('{"custom":true}');
    const answered = await post(running, '/v1/chat/completions', chat);
    expect(((await answered.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('finally');
    expect(running.requests.map((recorded) => recorded.fault)).toEqual([
      { status: 429, retryAfterSeconds: 3 },
      { status: 400, body: '{"custom":true}' },
      null,
    ]);
  });

  it('survives a client that hangs up on a stalled stream', async () => {
    const running = await serve([{ text: 'after the stall' }], [{ stallAfterFirstChunk: true }]);
    const controller = new AbortController();
    const stalled = await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...chat, stream: true }),
      signal: controller.signal,
    });
    const reader = stalled.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toContain('chat.completion.chunk');
    controller.abort();
    const next = await post(running, '/v1/chat/completions', chat);
    expect(next.status).toBe(200);
  });

  it('sends garbage with a 200 and resets connections', async () => {
    const running = await serve([], [{ garbage: true }, { resetConnection: true }]);
    const garbage = await post(running, '/v1/messages', { model: 'x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(garbage.status).toBe(200);
    await expect(garbage.json()).rejects.toThrow();
    await expect(post(running, '/v1/chat/completions', chat)).rejects.toThrow('fetch failed');
  });

  it('plays a storm to every request while it lasts, ahead of the queue, and stops when it is over', async () => {
    const running = await serve([{ text: 'after the storm' }], [{ status: 500 }]);
    running.storm({ status: 429, retryAfterSeconds: 1 }, 600_000);
    for (let request = 0; request < 3; request += 1) {
      const limited = await post(running, '/v1/chat/completions', chat);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
    }
    // A storm of no length replaces the one under way: it is over.
    running.storm({ status: 429 }, 0);
    expect((await post(running, '/v1/chat/completions', chat)).status).toBe(500);
    expect((await post(running, '/v1/chat/completions', chat)).status).toBe(200);
    const statuses = running.requests.map((recorded) => (recorded.fault !== null && 'status' in recorded.fault ? recorded.fault.status : null));
    expect(statuses).toEqual([429, 429, 429, 500, null]);
  });

  it('starts a storm from POST /control/storm, and says what a malformed one should look like', async () => {
    const running = await serve([{ text: 'calm again' }]);
    const refused = await post(running, '/control/storm', { seconds: 'ten', status: 429 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/"seconds" must be a number.*\{"seconds": N, "status": 429/);
    const started = await post(running, '/control/storm', { seconds: 600, status: 503, retryAfterSeconds: 2 });
    expect(started.status).toBe(200);
    expect(await started.json()).toEqual({ storm: { status: 503, retryAfterSeconds: 2 }, seconds: 600 });
    const overloaded = await post(running, '/v1/messages', { model: 'x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(overloaded.status).toBe(503);
    expect(overloaded.headers.get('retry-after')).toBe('2');
    expect((await post(running, '/control/storm', { seconds: 0, garbage: true })).status).toBe(200);
    expect((await post(running, '/v1/chat/completions', chat)).status).toBe(200);
  });

  it('records every request with its headers and body', async () => {
    const running = await serve([{ text: 'x' }]);
    await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer abc' },
      body: JSON.stringify(chat),
    });
    expect(running.requests).toEqual([
      expect.objectContaining({ method: 'POST', path: '/v1/chat/completions', body: chat, fault: null }),
    ]);
    expect(running.requests[0]?.headers.authorization).toBe('Bearer abc');
  });
});

it('cancels the model call when the client hangs up', async () => {
  let seen: LanguageModelV3CallOptions | undefined;
  const waitsForCancel: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'slow',
    supportedUrls: {},
    doGenerate: (options) =>
      new Promise((_resolve, reject) => {
        seen = options;
        options.abortSignal?.addEventListener('abort', () => reject(new Error('cancelled')));
      }),
    doStream: () => Promise.reject(new Error('not used')),
  };
  server = await startModelServer({ model: waitsForCancel });
  const controller = new AbortController();
  const pending = fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'hi' }] }),
    signal: controller.signal,
  });
  while (seen === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  await expect(pending).rejects.toThrow();
  while (seen.abortSignal?.aborted !== true) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(seen.abortSignal.aborted).toBe(true);
});

interface Chunk {
  choices: {
    delta?: { content?: string; tool_calls?: { function: { arguments?: string } }[] };
    finish_reason: string | null;
  }[];
}

interface AnthropicEvent {
  type: string;
  delta?: { type: string; text?: string; partial_json?: string };
}

interface ErrorBody {
  error: { message: string; type: string };
}
