import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { lookup as systemLookup } from 'node:dns';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EGRESS_SOCKET_NAME, startEgressProxy } from './egress-proxy.js';
import type { EgressDecision, EgressProxy, EgressProxyOptions, EgressTransfer } from './egress-proxy.js';

interface SeenRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

let directory: string;
let origin: Server;
let originPort: number;
let seen: SeenRequest[];
let proxies: EgressProxy[];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'colony-egress-'));
  seen = [];
  proxies = [];
  origin = createServer((incoming, response) => {
    seen.push({ url: incoming.url ?? '', headers: incoming.headers });
    response.end(`hello from ${incoming.url ?? ''}`);
  });
  origin.listen(0, '127.0.0.1');
  await once(origin, 'listening');
  originPort = (origin.address() as AddressInfo).port;
});

afterEach(async () => {
  for (const proxy of proxies) await proxy.close();
  origin.closeAllConnections();
  await new Promise((resolve) => origin.close(resolve));
  await rm(directory, { recursive: true, force: true });
});

interface Recorded {
  readonly proxy: EgressProxy;
  readonly decisions: EgressDecision[];
  readonly transfers: EgressTransfer[];
  readonly lookedUp: string[];
}

async function startProxy(hosts: string[], options: Partial<EgressProxyOptions> = {}): Promise<Recorded> {
  const decisions: EgressDecision[] = [];
  const transfers: EgressTransfer[] = [];
  const lookedUp: string[] = [];
  const lookup = ((hostname: string, lookupOptions: object, callback: never) => {
    lookedUp.push(hostname);
    systemLookup(hostname, lookupOptions, callback);
  }) as LookupFunction;
  const started = await startEgressProxy({
    directory,
    hosts,
    lookup,
    onDecision: (decision) => decisions.push(decision),
    onTransfer: (transfer) => transfers.push(transfer),
    ...options,
  });
  if (!started.ok) throw new Error(started.error);
  proxies.push(started.proxy);
  return { proxy: started.proxy, decisions, transfers, lookedUp };
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A plain-HTTP request through the proxy, in absolute form, as a proxy-aware client sends it. */
async function viaProxy(proxy: EgressProxy, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const outgoing = request({ socketPath: proxy.socketPath, path: url, headers: { Host: new URL(url).host, ...headers } });
  outgoing.end();
  const [response] = (await once(outgoing, 'response')) as [NodeJS.ReadableStream & { statusCode: number }];
  let body = '';
  for await (const chunk of response) body += String(chunk);
  return { status: response.statusCode, body };
}

/** Sends CONNECT and answers the status, the rest of what came back, and the socket when it is open. */
async function tunnel(proxy: EgressProxy, authority: string): Promise<Answer & { socket: Socket }> {
  const outgoing = request({ socketPath: proxy.socketPath, method: 'CONNECT', path: authority });
  outgoing.end();
  const [response, socket, head] = (await once(outgoing, 'connect')) as [{ statusCode: number }, Socket, Buffer];
  if (response.statusCode === 200) return { status: 200, body: head.toString(), socket };
  return { status: response.statusCode, body: head.toString() + (await readToEnd(socket)), socket };
}

async function readToEnd(socket: Socket): Promise<string> {
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  return text;
}

async function eventually(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('egress proxy: plain HTTP', () => {
  it('forwards a request to a listed address with Host from the URL and no proxy headers, and reports it', async () => {
    const { proxy, decisions, transfers } = await startProxy(['127.0.0.1']);
    const answer = await viaProxy(proxy, `http://127.0.0.1:${originPort}/a?b=1`, { 'Proxy-Connection': 'keep-alive', 'Proxy-Authorization': 'Basic eA==', 'X-Kept': 'yes' });
    expect(answer).toEqual({ status: 200, body: 'hello from /a?b=1' });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers).toMatchObject({ host: `127.0.0.1:${originPort}`, 'x-kept': 'yes' });
    expect(seen[0]?.headers['proxy-connection']).toBeUndefined();
    expect(seen[0]?.headers['proxy-authorization']).toBeUndefined();
    expect(decisions).toEqual([{ host: '127.0.0.1', port: originPort, allowed: true, kind: 'request' }]);
    await eventually(() => transfers.length === 1);
    expect(transfers[0]).toMatchObject({ host: '127.0.0.1', port: originPort, kind: 'request' });
    expect(transfers[0]?.bytesSent).toBeGreaterThan('GET /a?b=1 HTTP/1.1\r\n'.length);
    expect(transfers[0]?.bytesReceived).toBeGreaterThan('hello from /a?b=1'.length);
  });

  it('lets a listed name through after resolving it, and refuses its address when that is not listed', async () => {
    const { proxy, decisions, lookedUp } = await startProxy(['localhost']);
    expect((await viaProxy(proxy, `http://LOCALHOST:${originPort}/named`)).status).toBe(200);
    expect(lookedUp).toEqual(['localhost']);
    const refused = await viaProxy(proxy, `http://127.0.0.1:${originPort}/literal`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('colony\'s network proxy refused 127.0.0.1');
    expect(seen.map((entry) => entry.url)).toEqual(['/named']);
    expect(decisions.map((decision) => [decision.host, decision.allowed])).toEqual([['localhost', true], ['127.0.0.1', false]]);
  });

  it('refuses a host not on the list with 403 that says how to add it, resolving nothing', async () => {
    const { proxy, decisions, lookedUp } = await startProxy(['127.0.0.1']);
    const answer = await viaProxy(proxy, 'http://Denied.Invalid/path');
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('denied.invalid: it is not on this run\'s network allow-list');
    expect(answer.body).toContain('--network-allow denied.invalid');
    expect(lookedUp).toEqual([]);
    expect(decisions).toEqual([{ host: 'denied.invalid', port: 80, allowed: false, kind: 'request' }]);
  });

  it('answers 502 naming the host when an allowed host cannot be reached', async () => {
    const { proxy } = await startProxy(['127.0.0.1']);
    const closedPort = await unusedPort();
    const answer = await viaProxy(proxy, `http://127.0.0.1:${closedPort}/`);
    expect(answer.status).toBe(502);
    expect(answer.body).toContain(`could not reach 127.0.0.1:${closedPort}, which is allowed: ECONNREFUSED`);
  });

  it('answers 504 when reaching an allowed host takes too long', async () => {
    const neverAnswers = (() => undefined) as unknown as LookupFunction;
    const { proxy } = await startProxy(['slow.example'], { lookup: neverAnswers, connectTimeoutMs: 50 });
    const answer = await viaProxy(proxy, 'http://slow.example/');
    expect(answer.status).toBe(504);
    expect(answer.body).toContain('could not reach slow.example:80, which is allowed: timed out');
    const tunnelled = await tunnel(proxy, 'slow.example:443');
    expect(tunnelled.status).toBe(504);
    expect(tunnelled.body).toContain('could not reach slow.example:443');
  });

  it('answers 501 to a plain-HTTP upgrade', async () => {
    const { proxy } = await startProxy(['127.0.0.1']);
    const socket = connect(proxy.socketPath);
    socket.write(`GET http://127.0.0.1:${originPort}/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    const answer = await readToEnd(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 501 Not Implemented/);
    expect(answer).toContain('use wss:// or https://');
    expect(seen).toEqual([]);
  });

  it('answers 400 to a request that is not in absolute form or not http', async () => {
    const { proxy, decisions } = await startProxy(['127.0.0.1']);
    for (const url of ['/relative', `https://127.0.0.1:${originPort}/`]) {
      const outgoing = request({ socketPath: proxy.socketPath, path: url });
      outgoing.end();
      const [response] = (await once(outgoing, 'response')) as [NodeJS.ReadableStream & { statusCode: number }];
      let body = '';
      for await (const chunk of response) body += String(chunk);
      expect(response.statusCode).toBe(400);
      expect(body).toContain('absolute form');
    }
    expect(decisions).toEqual([]);
  });
});

describe('egress proxy: CONNECT', () => {
  it('tunnels to a listed address and counts the bytes both ways', async () => {
    const { proxy, decisions, transfers } = await startProxy(['127.0.0.1']);
    const opened = await tunnel(proxy, `127.0.0.1:${originPort}`);
    expect(opened.status).toBe(200);
    const sent = `GET /through HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    opened.socket.write(sent);
    const reply = await readToEnd(opened.socket);
    expect(reply).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(reply).toContain('hello from /through');
    expect(decisions).toEqual([{ host: '127.0.0.1', port: originPort, allowed: true, kind: 'tunnel' }]);
    await eventually(() => transfers.length === 1);
    expect(transfers[0]?.bytesSent).toBe(sent.length);
    expect(transfers[0]?.bytesReceived).toBe(reply.length);
  });

  it('refuses a host not on the list with 403, resolving nothing', async () => {
    const { proxy, decisions, lookedUp } = await startProxy(['localhost']);
    const refused = await tunnel(proxy, 'registry.npmjs.org:443');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('--network-allow registry.npmjs.org');
    const literal = await tunnel(proxy, `[::1]:${originPort}`);
    expect(literal.status).toBe(403);
    expect(lookedUp).toEqual([]);
    expect(decisions).toEqual([
      { host: 'registry.npmjs.org', port: 443, allowed: false, kind: 'tunnel' },
      { host: '::1', port: originPort, allowed: false, kind: 'tunnel' },
    ]);
  });

  it('answers 502 when an allowed host refuses, and 400 to a target without a port', async () => {
    const { proxy } = await startProxy(['127.0.0.1']);
    const closedPort = await unusedPort();
    const unreachable = await tunnel(proxy, `127.0.0.1:${closedPort}`);
    expect(unreachable.status).toBe(502);
    expect(unreachable.body).toContain('ECONNREFUSED');
    const malformed = await tunnel(proxy, '127.0.0.1');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toContain('CONNECT takes host:port');
  });
});

describe('egress proxy: limits and lifecycle', () => {
  it('makes its socket connectable by any uid in a directory others may search', async () => {
    const nested = join(directory, 'run');
    const { proxy } = await startProxy(['127.0.0.1'], { directory: nested });
    expect(proxy.socketPath).toBe(join(nested, EGRESS_SOCKET_NAME));
    expect((await stat(proxy.socketPath)).mode & 0o777).toBe(0o666);
    expect((await stat(nested)).mode & 0o777).toBe(0o711);
  });

  it('answers 503 past the connection cap and serves again once a connection closes', async () => {
    const { proxy } = await startProxy(['127.0.0.1'], { maxConnections: 2 });
    const held = [connect(proxy.socketPath), connect(proxy.socketPath)];
    await eventually(() => proxy.openConnections() === 2);
    const extra = connect(proxy.socketPath);
    const refused = await readToEnd(extra);
    expect(refused).toMatch(/^HTTP\/1\.1 503 Service Unavailable/);
    expect(refused).toContain('already has 2 connections open');
    held[0]?.destroy();
    await eventually(() => proxy.openConnections() === 1);
    expect((await viaProxy(proxy, `http://127.0.0.1:${originPort}/again`)).status).toBe(200);
    held[1]?.destroy();
  });

  it('close() destroys open tunnels, stops listening and removes the socket', async () => {
    const { proxy } = await startProxy(['127.0.0.1']);
    const opened = await tunnel(proxy, `127.0.0.1:${originPort}`);
    expect(opened.status).toBe(200);
    const tunnelClosed = once(opened.socket, 'close');
    await proxy.close();
    await tunnelClosed;
    expect(proxy.openConnections()).toBe(0);
    await expect(stat(proxy.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    const late = connect(proxy.socketPath);
    const [error] = (await once(late, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ENOENT');
    await proxy.close();
  });

  it('takes the place of a socket left by a dead process, and refuses one still answered', async () => {
    const socketPath = join(directory, EGRESS_SOCKET_NAME);
    const leftover = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('ready'))`]);
    await once(leftover.stdout, 'data');
    leftover.kill('SIGKILL');
    await once(leftover, 'exit');
    await chmod(socketPath, 0o600);
    const { proxy } = await startProxy(['127.0.0.1']);
    expect((await viaProxy(proxy, `http://127.0.0.1:${originPort}/`)).status).toBe(200);
    const second = await startEgressProxy({ directory, hosts: ['127.0.0.1'] });
    expect(second).toEqual({ ok: false, error: `the egress proxy cannot listen on ${socketPath}: another process already listens there` });
  });

  it('refuses a directory whose socket path would be too long', async () => {
    const started = await startEgressProxy({ directory: join(directory, 'd'.repeat(120)), hosts: ['127.0.0.1'] });
    expect(started.ok).toBe(false);
    expect(started.ok ? '' : started.error).toContain('longer than the 107 bytes');
  });
});

async function unusedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
