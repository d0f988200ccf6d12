import { readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { LookupFunction, Socket } from 'node:net';
import { join } from 'node:path';
import { canonicalHost, createHostMatcher } from './network-policy.js';

const DENIED_TEMPLATE = readFileSync(new URL('./egress-denied.md', import.meta.url), 'utf8').trim();

export const EGRESS_SOCKET_NAME = 'egress-proxy.sock';
export const DEFAULT_MAX_CONNECTIONS = 256;
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
/** sun_path holds 108 bytes, the last one a NUL. */
const MAX_SOCKET_PATH_BYTES = 107;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** One allow-list decision: `tunnel` for CONNECT, `request` for a plain-HTTP request. */
export interface EgressDecision {
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  readonly kind: 'tunnel' | 'request';
}

/** What went over one allowed upstream connection, counted on the socket (headers included). */
export interface EgressTransfer {
  readonly host: string;
  readonly port: number;
  readonly kind: 'tunnel' | 'request';
  /** Bytes written to the upstream host. */
  readonly bytesSent: number;
  /** Bytes read from the upstream host. */
  readonly bytesReceived: number;
}

export interface EgressProxyOptions {
  /** Where the socket is made (created with mode 0711 when missing); a sandbox's uid must be able to search it. */
  readonly directory: string;
  /** Canonical allow-list entries, as parseHostList returns them. */
  readonly hosts: readonly string[];
  /** Called for every CONNECT and every request with a valid target, before any name is resolved. Must not throw. */
  readonly onDecision?: (decision: EgressDecision) => void;
  /** Called when an allowed upstream connection closes. Must not throw. */
  readonly onTransfer?: (transfer: EgressTransfer) => void;
  /** Client connections open at once; the next one gets 503. */
  readonly maxConnections?: number;
  /** A connection with no traffic either way for this long is closed. */
  readonly idleTimeoutMs?: number;
  /** How long reaching an upstream host may take. */
  readonly connectTimeoutMs?: number;
  /** How long a client may take to send a request's headers. */
  readonly headersTimeoutMs?: number;
  /** Name resolution for allowed names; defaults to the system's. */
  readonly lookup?: LookupFunction;
}

export interface EgressProxy {
  /** The UNIX socket the proxy listens on (mode 0666). */
  readonly socketPath: string;
  /** Client and upstream connections open now. */
  openConnections(): number;
  /** Stops listening, destroys every open connection and tunnel, and removes the socket. */
  close(): Promise<void>;
}

export type EgressProxyStart = { ok: true; proxy: EgressProxy } | { ok: false; error: string };

interface ProxyContext {
  readonly options: EgressProxyOptions;
  readonly allows: (host: string) => boolean;
  readonly upstreams: Set<Socket>;
}

/** The 403 body for a host not on the allow-list. */
export function deniedMessage(host: string): string {
  return `${DENIED_TEMPLATE.replaceAll('{host}', host)}\n`;
}

/**
 * Starts an HTTP proxy on a UNIX socket that lets through only the allow-listed hosts: CONNECT
 * tunnels (HTTPS and anything else over TCP) and plain-HTTP requests in absolute form. A
 * denied host gets 403 and is never resolved. Every socket is streamed with backpressure and
 * has timeouts, and the number of client connections is capped, so no client can hold the
 * event loop or exhaust descriptors.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxyStart> {
  const socketPath = join(options.directory, EGRESS_SOCKET_NAME);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    return { ok: false, error: `the egress proxy's socket path ${socketPath} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a UNIX socket path may have; give a shorter directory` };
  }
  const context: ProxyContext = { options, allows: createHostMatcher(options.hosts), upstreams: new Set() };
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const clients = new Set<Socket>();
  const refused = new WeakSet<Socket>();
  const server = createServer({ headersTimeout: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout: 0 });
  server.timeout = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => {
    if (clients.size >= maxConnections) {
      refused.add(socket);
      endRaw(socket, 503, 'Service Unavailable', `colony's network proxy already has ${maxConnections} connections open, its limit; try again when some have finished.\n`);
      return;
    }
    clients.add(socket);
    socket.once('close', () => clients.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!refused.has(request.socket)) forwardRequest(context, request, response);
  });
  server.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!refused.has(socket)) openTunnel(context, request, socket, head);
  });
  server.on('upgrade', (_request: IncomingMessage, socket: Socket) => {
    endRaw(socket, 501, 'Not Implemented', 'colony\'s network proxy does not upgrade plain-HTTP connections; use wss:// or https://, which go through a CONNECT tunnel.\n');
  });

  try {
    await mkdir(options.directory, { recursive: true, mode: 0o711 });
  } catch (error) {
    return { ok: false, error: `cannot make the egress proxy's directory ${options.directory}: ${errorText(error)}` };
  }
  const listenError = await listenReplacingStaleSocket(server, socketPath);
  if (listenError !== null) return { ok: false, error: `the egress proxy cannot listen on ${socketPath}: ${listenError}` };
  // Connecting to a UNIX socket needs write permission on it, and sandboxes run as other uids.
  await chmod(socketPath, 0o666);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of [...clients, ...context.upstreams]) socket.destroy();
      await closed;
      await rm(socketPath, { force: true });
    })();
    return closing;
  };
  return { ok: true, proxy: { socketPath, openConnections: () => clients.size + context.upstreams.size, close } };
}

function decide(context: ProxyContext, host: string, port: number, kind: EgressDecision['kind']): boolean {
  const allowed = context.allows(host);
  context.options.onDecision?.({ host, port, allowed, kind });
  return allowed;
}

function openTunnel(context: ProxyContext, request: IncomingMessage, client: Socket, head: Buffer): void {
  client.on('error', () => client.destroy());
  const target = parseConnectTarget(request.url ?? '');
  if (!target.ok) return endRaw(client, 400, 'Bad Request', target.error);
  if (!decide(context, target.host, target.port, 'tunnel')) return endRaw(client, 403, 'Forbidden', deniedMessage(target.host));
  const upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true, ...lookupOption(context) });
  let established = false;
  const closeBoth = (): void => {
    client.destroy();
    upstream.destroy();
  };
  // Until the tunnel is established the client is owed an answer, so a failure ends it with one.
  const fail = (status: number, reason: string, error: unknown): void => {
    if (established) return closeBoth();
    upstream.destroy();
    endRaw(client, status, reason, unreachableMessage(target, error));
  };
  trackUpstream(context, upstream, target, 'tunnel');
  client.on('close', closeBoth);
  client.setTimeout(context.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, closeBoth);
  upstream.on('error', (error) => fail(502, 'Bad Gateway', error));
  watchTimeouts(context, upstream, () => fail(504, 'Gateway Timeout', new Error('timed out')));
  upstream.once('connect', () => {
    established = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.once('close', closeBoth);
  });
}

function forwardRequest(context: ProxyContext, request: IncomingMessage, response: ServerResponse): void {
  const target = parseRequestTarget(request.url ?? '');
  if (!target.ok) return respond(response, 400, target.error);
  if (!decide(context, target.host, target.port, 'request')) return respond(response, 403, deniedMessage(target.host));
  const upstream = httpRequest({
    host: target.host,
    port: target.port,
    method: request.method,
    path: target.path,
    headers: forwardedHeaders(request.rawHeaders, target.authority, ['expect']),
    setHost: false,
    agent: false,
    ...lookupOption(context),
  });
  upstream.once('socket', (socket: Socket) => {
    trackUpstream(context, socket, target, 'request');
    watchTimeouts(context, socket, () => {
      if (!response.headersSent) respond(response, 504, unreachableMessage(target, new Error('timed out')));
      upstream.destroy();
    });
  });
  upstream.once('response', (upstreamResponse) => {
    response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.statusMessage, forwardedHeaders(upstreamResponse.rawHeaders, null, []));
    upstreamResponse.pipe(response);
    upstreamResponse.once('error', () => response.destroy());
  });
  upstream.on('error', (error) => {
    if (response.writableEnded) return;
    if (response.headersSent) response.destroy();
    else respond(response, 502, unreachableMessage(target, error));
  });
  request.once('error', () => upstream.destroy());
  response.once('close', () => {
    if (!response.writableFinished) upstream.destroy();
  });
  request.pipe(upstream);
}

interface Target {
  readonly host: string;
  readonly port: number;
}
type Parsed<T> = ({ ok: true } & T) | { ok: false; error: string };

/** `host:port` or `[v6]:port`, the only form CONNECT takes. */
export function parseConnectTarget(text: string): Parsed<Target> {
  const match = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  const host = match?.[1] === undefined ? null : canonicalHost(match[1]);
  const port = Number(match?.[2]);
  if (host === null || !Number.isInteger(port) || port < 1 || port > 65_535) return { ok: false, error: `CONNECT takes host:port, not "${text}".\n` };
  return { ok: true, host, port };
}

/** An absolute `http://` URL, the form a client uses toward a proxy. */
export function parseRequestTarget(text: string): Parsed<Target & { path: string; authority: string }> {
  const notForwarded = `colony's network proxy forwards http:// requests in absolute form (GET http://host/path) and CONNECT tunnels (https), not "${text.slice(0, 200)}".\n`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: notForwarded };
  }
  const host = canonicalHost(url.hostname);
  if (url.protocol !== 'http:' || host === null) return { ok: false, error: notForwarded };
  return { ok: true, host, port: url.port === '' ? 80 : Number(url.port), path: `${url.pathname}${url.search}`, authority: url.host };
}

/** Raw headers without the hop-by-hop ones (and those Connection names), Host set to `authority`. */
function forwardedHeaders(raw: readonly string[], authority: string | null, alsoDropped: readonly string[]): string[] {
  const dropped = new Set([...HOP_BY_HOP, ...alsoDropped]);
  for (let index = 0; index + 1 < raw.length; index += 2) {
    if (raw[index]?.toLowerCase() !== 'connection') continue;
    for (const name of (raw[index + 1] ?? '').split(',')) dropped.add(name.trim().toLowerCase());
  }
  const kept: string[] = authority === null ? [] : ['Host', authority];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] ?? '';
    const lower = name.toLowerCase();
    if (dropped.has(lower) || (authority !== null && lower === 'host')) continue;
    kept.push(name, raw[index + 1] ?? '');
  }
  return kept;
}

function trackUpstream(context: ProxyContext, socket: Socket, target: Target, kind: EgressTransfer['kind']): void {
  context.upstreams.add(socket);
  socket.once('close', () => {
    context.upstreams.delete(socket);
    context.options.onTransfer?.({ host: target.host, port: target.port, kind, bytesSent: socket.bytesWritten, bytesReceived: socket.bytesRead });
  });
}

/** The connect timeout until the socket connects, then the idle timeout. */
function watchTimeouts(context: ProxyContext, socket: Socket, onTimeout: () => void): void {
  const idleTimeoutMs = context.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  socket.setTimeout(socket.connecting ? (context.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) : idleTimeoutMs);
  socket.once('connect', () => socket.setTimeout(idleTimeoutMs));
  socket.on('timeout', onTimeout);
}

function lookupOption(context: ProxyContext): { lookup?: LookupFunction } {
  return context.options.lookup === undefined ? {} : { lookup: context.options.lookup };
}

function unreachableMessage(target: Target, error: unknown): string {
  return `colony's network proxy could not reach ${target.host}:${target.port}, which is allowed: ${errorText(error)}.\n`;
}

function respond(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** A whole response written straight to a socket the HTTP server no longer owns, then closed. */
function endRaw(socket: Socket, status: number, reason: string, body: string): void {
  if (!socket.writable) return void socket.destroy();
  socket.on('error', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.once('finish', () => socket.destroy());
}

async function listenReplacingStaleSocket(server: Server, socketPath: string): Promise<string | null> {
  const first = await listen(server, socketPath);
  if (first === null || !first.startsWith('EADDRINUSE')) return first;
  const existing = await lstat(socketPath).catch(() => null);
  if (existing !== null && !existing.isSocket()) return 'the path exists and is not a socket';
  if (await answers(socketPath)) return 'another process already listens there';
  // A socket nobody answers on is left over from a process that died: take its place.
  await rm(socketPath, { force: true });
  return listen(server, socketPath);
}

function listen(server: Server, socketPath: string): Promise<string | null> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException): void => resolve(`${error.code ?? 'error'}: ${error.message}`);
    server.once('error', onError);
    server.listen(socketPath, () => {
      server.off('error', onError);
      resolve(null);
    });
  });
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

function errorText(error: unknown): string {
  if (error instanceof Error) return 'code' in error && typeof error.code === 'string' ? `${error.code} (${error.message})` : error.message;
  return String(error);
}
