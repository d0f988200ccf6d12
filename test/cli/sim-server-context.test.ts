import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = new URL('../../bin/colony.js', import.meta.url).pathname;

let server: ChildProcess;
let baseUrl: string;

/** The real `colony sim-server` with a context window of 1000 tokens. */
beforeAll(async () => {
  server = spawn(process.execPath, [BIN, 'sim-server', '--port', '0', '--sim', 'sim?context=1000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  baseUrl = await new Promise<string>((resolve, reject) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = /--base-url (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(printed);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    server.once('exit', (code) => reject(new Error(`sim-server exited with ${code}: ${printed}`)));
  });
});

afterAll(async () => {
  if (server.exitCode !== null) return;
  const exited = once(server, 'exit');
  server.kill('SIGTERM');
  await exited;
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
