import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../../model/server/model-server.js';
import { createScriptedLanguageModel } from '../../model/testing/scripted-language-model.js';
import { unusedPort } from '../../model/testing/unused-port.js';
import { checkModels } from './model-check.js';
import type { DoctorCheck } from './types.js';

/**
 * The model check against real HTTP servers on the loopback: colony's own model server (which
 * lists its model), one without a listing that answers completions, and plain servers that
 * refuse the key or answer with a web page; and a port nothing listens on.
 */
const KEY = 'sk-doctor-test-0123456789abcdef';
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

interface PlainServer {
  readonly url: string;
  readonly requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
}

/** A server that answers every request with `answer`, recording what it was sent. */
async function plainServer(answer: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<PlainServer> {
  const requests: PlainServer['requests'] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      answer(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no port');
  return { url: `http://127.0.0.1:${address.port}`, requests };
}

async function modelServer(modelId = 'coder'): Promise<ModelServer> {
  const server = await startModelServer({ model: createScriptedLanguageModel([{ text: 'yes', usage: { inputTokens: 14, outputTokens: 1 } }], { modelId }) });
  closers.push(() => server.close());
  return server;
}

async function checkOne(spec: string, baseUrl: string | undefined, env: Record<string, string> = {}): Promise<DoctorCheck> {
  const checks = await checkModels([{ spec, roles: ['workers'], baseUrl, apiKeyEnv: undefined }], { env, timeoutMs: 10_000 });
  expect(checks).toHaveLength(1);
  const [check] = checks;
  if (check === undefined) throw new Error('no check');
  expect(JSON.stringify(check)).not.toContain(KEY);
  return check;
}

describe('the model check', () => {
  it('passes the sim without a request, once for both roles', async () => {
    const checks = await checkModels([{ spec: 'sim', roles: ['workers'] }, { spec: 'sim', roles: ['planners'] }], { env: {} });
    expect(checks).toEqual([{ name: 'model sim (workers, planners)', status: 'pass', detail: expect.stringContaining('no request'), tokens: { input: 0, output: 0 } }]);
  });

  it('fails a sim spec with options the sim does not take', async () => {
    const [check] = await checkModels([{ spec: 'sim?colour=blue', roles: ['workers'] }], { env: {} });
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('colour') });
  });

  it('passes a server whose models listing names the model, spending no tokens', async () => {
    const server = await modelServer('coder');
    const check = await checkOne('openai-compatible:coder', `${server.url}/v1`);
    expect(check).toMatchObject({ status: 'pass', detail: expect.stringContaining('lists coder'), tokens: { input: 0, output: 0 } });
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
  });

  it('warns when the listing does not name the model', async () => {
    const server = await modelServer('other-model');
    const check = await checkOne('openai-compatible:coder', `${server.url}/v1`);
    expect(check).toMatchObject({ status: 'warn', detail: expect.stringContaining('do not include coder') });
  });

  it('asks for one output token where the server has no listing, and reports the tokens spent', async () => {
    const upstream = await modelServer('coder');
    const server = await plainServer((request, response, body) => {
      if (request.method === 'GET') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      void fetch(`${upstream.url}${request.url ?? ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
      });
    });
    const check = await checkOne('openai-compatible:coder', `${server.url}/v1`);
    expect(check).toMatchObject({ status: 'pass', detail: expect.stringContaining('15 tokens spent (14 in, 1 out)'), tokens: { input: 14, output: 1 } });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.body).toMatchObject({ max_tokens: 1 });
  });

  it('fails a key the provider refuses, naming its variable and never the key', async () => {
    const server = await plainServer((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}');
    });
    const check = await checkOne('openai:gpt-5.2', `${server.url}/v1`, { OPENAI_API_KEY: KEY });
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('refused the API key (HTTP 401'), fix: expect.stringContaining('OPENAI_API_KEY') });
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("sends Anthropic's own headers to its listing", async () => {
    const server = await plainServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"claude-opus-4-5","type":"model"}],"has_more":false}');
    });
    const check = await checkOne('anthropic:claude-opus-4-5', `${server.url}/v1`, { ANTHROPIC_API_KEY: KEY });
    expect(check).toMatchObject({ status: 'pass', detail: expect.stringContaining('with the key in ANTHROPIC_API_KEY') });
    expect(server.requests[0]).toMatchObject({ path: '/v1/models', headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' } });
  });

  it('fails a port nothing listens on as a connection that failed, pointing at --base-url', async () => {
    const check = await checkOne('openai-compatible:coder', `http://127.0.0.1:${await unusedPort()}/v1`);
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('The connection to the provider failed'), fix: expect.stringContaining('--base-url') });
  });

  it('fails a web page where the API should answer, with its title', async () => {
    const server = await plainServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><head><title>Sign in to the proxy</title></head><body>…</body></html>');
    });
    const check = await checkOne('openai-compatible:coder', server.url);
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringMatching(/answered with an HTML page \(HTTP 200, "Sign in to the proxy"\)/), fix: expect.stringContaining('/v1') });
    // The listing's answer says it all: no completion is tried on a page.
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /models']);
  });

  it('fails a missing key before any request', async () => {
    const server = await plainServer((_request, response) => response.writeHead(500).end());
    const check = await checkOne('openai:gpt-5.2', `${server.url}/v1`, {});
    expect(check).toMatchObject({ status: 'fail', detail: expect.stringContaining('OPENAI_API_KEY is not set'), fix: expect.stringContaining('--api-key-env') });
    expect(server.requests).toEqual([]);
  });

  it('fails an openai-compatible model without --base-url with the fix the model layer gives', async () => {
    const check = await checkOne('openai-compatible:coder', undefined);
    expect(check).toMatchObject({ status: 'fail', fix: expect.stringContaining('--base-url') });
  });
});
