import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, stopSimServer } from '../testing/sim-server-process.js';

let server: ChildProcess;
let baseUrl: string;

/** The real `colony sim-server` with a context window of 1000 tokens. */
beforeAll(async () => {
  ({ process: server, baseUrl } = await startSimServer('sim?context=1000'));
});

afterAll(async () => {
  await stopSimServer(server);
});

async function complete(characters: number): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'z'.repeat(characters) }] }),
  });
}

describe('colony sim-server --sim sim?context=N', () => {
  it('answers a request that fits and refuses a larger one with a 400 context_length_exceeded', async () => {
    expect((await complete(4_000)).status).toBe(200);
    const refused = await complete(4_004);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: {
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        message: "This model's maximum context length is 1000 tokens, but the request has 1001 tokens (context_length_exceeded).",
      },
    });
  });
});
