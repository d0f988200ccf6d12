import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BRIDGE_PORT, SANDBOX_EGRESS_SOCKET_PATH, egressBridgeExtras, findSocat } from './egress-bridge.js';
import type { EgressBridgeExtras } from './egress-bridge.js';
import { startEgressProxy } from './egress-proxy.js';
import type { EgressDecision, EgressProxy } from './egress-proxy.js';

const SANDBOX_UID = '2000000003';
const SANDBOX_GID = '2000000000';
const COMMAND_TIMEOUT_MS = 20_000;

function onPath(name: string): string | null {
  for (const directory of (process.env['PATH'] ?? '').split(delimiter)) {
    if (directory === '') continue;
    try {
      accessSync(join(directory, name), constants.X_OK);
      return join(directory, name);
    } catch {
      // Not here; the next directory may have it.
    }
  }
  return null;
}

const runsAsRoot = process.getuid?.() === 0;
const needed = ['bwrap', 'socat', ...(runsAsRoot ? ['setpriv'] : [])];
const missing = needed.filter((name) => onPath(name) === null);
const skipReason = missing.length === 0 ? '' : ` (skipped: ${missing.join(', ')} not installed)`;
const curlPath = onPath('curl');

/**
 * HTTP by hand over bash's /dev/tcp, so the bridge and the proxy are shown to work without any
 * proxy-aware tool: `through_bridge PORT REQUEST-LINE` sends one request to the bridge and
 * prints the whole answer; `tunnel_get PORT AUTHORITY PATH` opens a CONNECT tunnel, prints
 * its status line, then sends a GET through it and prints that answer.
 */
const BASH_CLIENT = `
through_bridge() {
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 7
  printf '%s HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' "$2" >&3
  cat <&3
  exec 3<&-
}
tunnel_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 7
  printf 'CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' "$2" "$2" >&3
  IFS= read -r status <&3
  echo "tunnel: $status"
  case "$status" in *" 200 "*) ;; *) cat <&3; exec 3<&-; return 1 ;; esac
  while IFS= read -r line <&3 && [ "$line" != $'\\r' ]; do :; done
  printf 'GET %s HTTP/1.0\\r\\nHost: %s\\r\\n\\r\\n' "$3" "$2" >&3
  cat <&3
  exec 3<&-
}
`;

describe('egressBridgeExtras', () => {
  it('binds the socket read-only at the fixed path and points every proxy variable at the bridge', () => {
    const extras = egressBridgeExtras({ proxySocketPath: '/state/run/egress-proxy.sock' });
    expect(extras.binds).toEqual([{ source: '/state/run/egress-proxy.sock', target: SANDBOX_EGRESS_SOCKET_PATH, writable: false }]);
    const proxy = `http://127.0.0.1:${DEFAULT_BRIDGE_PORT}`;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'npm_config_proxy', 'npm_config_https_proxy']) {
      expect(extras.environment[name]).toBe(proxy);
    }
    expect(extras.environment['NO_PROXY']).toBe('localhost,127.0.0.1');
    expect(extras.prelude).toContain(`socat TCP-LISTEN:${DEFAULT_BRIDGE_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${SANDBOX_EGRESS_SOCKET_PATH}`);
  });

  it('throws on a port or a sandbox path it cannot put in a script', () => {
    expect(() => egressBridgeExtras({ proxySocketPath: '/s', port: 70_000 })).toThrow('not a TCP port');
    expect(() => egressBridgeExtras({ proxySocketPath: '/s', sandboxSocketPath: '/run/a b;rm' })).toThrow('absolute and plain');
  });

  it('finds socat on a PATH, and says how to install it when it is not there', async () => {
    const found = await findSocat('/nonexistent:/usr/bin:/bin');
    expect(found.ok || missing.includes('socat')).toBe(true);
    expect(await findSocat('/nonexistent')).toEqual({ ok: false, error: expect.stringContaining('apt-get install socat') });
  });
});

interface SandboxRun {
  readonly exitCode: number | null;
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

describe.skipIf(missing.length > 0)(`a command in bwrap --unshare-all reaching the proxy through the bridge${skipReason}`, () => {
  // A port of its own, so a socat left behind could be found by its command line.
  const bridgePort = 20_000 + (process.pid % 20_000);
  let directory: string;
  let origin: Server;
  let originPort: number;
  let seenPaths: string[];
  let proxy: EgressProxy;
  let decisions: EgressDecision[];
  let extras: EgressBridgeExtras;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'colony-bridge-'));
    // The sandbox's uid resolves the bind's source path, so it must be able to search the way there.
    await chmod(directory, 0o711);
    seenPaths = [];
    origin = createServer((request, response) => {
      seenPaths.push(request.url ?? '');
      response.end(`hello from ${request.url ?? ''}\n`);
    });
    // Every interface, so a direct request to the host's own address would reach it if it could.
    origin.listen(0, '0.0.0.0');
    await once(origin, 'listening');
    originPort = (origin.address() as AddressInfo).port;
    decisions = [];
    const started = await startEgressProxy({ directory: join(directory, 'proxy'), hosts: ['127.0.0.1'], onDecision: (decision) => decisions.push(decision) });
    if (!started.ok) throw new Error(started.error);
    proxy = started.proxy;
    extras = egressBridgeExtras({ proxySocketPath: proxy.socketPath, port: bridgePort });
  });

  afterAll(async () => {
    await proxy.close();
    origin.closeAllConnections();
    await new Promise((resolve) => origin.close(resolve));
    await rm(directory, { recursive: true, force: true });
  });

  async function runSandboxed(command: string, using: EgressBridgeExtras = extras, path = '/usr/local/bin:/usr/bin:/bin'): Promise<SandboxRun> {
    const binds = using.binds.flatMap((bind) => [bind.writable ? '--bind' : '--ro-bind', bind.source, bind.target]);
    const bwrap = [onPath('bwrap') ?? 'bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', ...binds, '--chdir', '/tmp', '/bin/bash', '-c', `${using.prelude}\n${command}`];
    // As root bwrap would keep its capabilities, so the sandbox starts as an unprivileged uid.
    const argv = runsAsRoot ? [onPath('setpriv') ?? 'setpriv', '--reuid', SANDBOX_UID, '--regid', SANDBOX_GID, '--clear-groups', '--inh-caps=-all', ...bwrap] : bwrap;
    const child = spawn(argv[0] ?? 'bwrap', argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: path, HOME: '/tmp', LANG: 'C.UTF-8', ...using.environment },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, COMMAND_TIMEOUT_MS);
    // 'close' waits for the output pipes too: a bridge that kept them open would hold it.
    const [exitCode] = (await once(child, 'close')) as [number | null];
    clearTimeout(timer);
    return { exitCode, killed, stdout, stderr };
  }

  async function bridgesAlive(): Promise<number> {
    let count = 0;
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const commandLine = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
      if (commandLine.includes(`TCP-LISTEN:${bridgePort},`)) count += 1;
    }
    return count;
  }

  /**
   * The bridges still alive once the sandbox's pid namespace has had a few seconds to be taken
   * down: the kernel kills what is left in it when the command ends, but a killed process keeps
   * its command line until it is gone, which on a loaded machine can outlast the command's exit.
   */
  async function bridgesLeft(deadlineMs = 5_000): Promise<number> {
    for (let waited = 0; waited < deadlineMs; waited += 20) {
      if ((await bridgesAlive()) === 0) return 0;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return bridgesAlive();
  }

  it('runs `echo hi` to completion with the bridge already accepting, and leaves no socat behind', async () => {
    // A bash builtin connects at once, before any program could start: the prelude waited.
    const run = await runSandboxed(`(exec 3<>/dev/tcp/127.0.0.1/${bridgePort}) && echo hi`);
    expect(run).toEqual({ exitCode: 0, killed: false, stdout: 'hi\n', stderr: '' });
    expect(await bridgesLeft()).toBe(0);
  });

  it('says so on stderr and still runs the command when the bridge cannot start', async () => {
    // Binding a port below 1024 needs a capability the sandbox does not have.
    const privilegedPort = await runSandboxed('echo ran', egressBridgeExtras({ proxySocketPath: proxy.socketPath, port: 80 }));
    expect(privilegedPort).toMatchObject({ exitCode: 0, killed: false, stdout: 'ran\n' });
    expect(privilegedPort.stderr).toContain('the network bridge (socat on 127.0.0.1:80) did not start');
    const withoutSocat = await runSandboxed('echo ran', extras, '/nonexistent');
    expect(withoutSocat).toMatchObject({ exitCode: 0, killed: false, stdout: 'ran\n' });
    expect(withoutSocat.stderr).toContain('socat is missing');
  });

  it('carries hand-written HTTP to an allowed server, plainly and through CONNECT, and refuses a denied host', async () => {
    const allowed = `127.0.0.1:${originPort}`;
    const run = await runSandboxed(
      `${BASH_CLIENT}\n` +
        `through_bridge ${bridgePort} 'GET http://${allowed}/raw-plain'; ` +
        `tunnel_get ${bridgePort} ${allowed} /raw-tunnelled; ` +
        `through_bridge ${bridgePort} 'GET http://denied.example/'; ` +
        `tunnel_get ${bridgePort} denied.example:443 /`,
    );
    expect(run.killed).toBe(false);
    expect(run.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*hello from \/raw-plain\n/);
    expect(run.stdout).toContain('tunnel: HTTP/1.1 200 Connection Established');
    expect(run.stdout).toContain('hello from /raw-tunnelled\n');
    expect(run.stdout).toMatch(/HTTP\/1\.1 403 Forbidden\r\n[\s\S]*refused denied\.example: it is not on this run's network allow-list/);
    expect(run.stdout).toContain('tunnel: HTTP/1.1 403 Forbidden');
    expect(run.stdout).toContain('--network-allow denied.example');
    expect(seenPaths).toEqual(expect.arrayContaining(['/raw-plain', '/raw-tunnelled']));
    expect(decisions).toEqual(expect.arrayContaining([
      { host: '127.0.0.1', port: originPort, allowed: true, kind: 'request' },
      { host: '127.0.0.1', port: originPort, allowed: true, kind: 'tunnel' },
      { host: 'denied.example', port: 80, allowed: false, kind: 'request' },
      { host: 'denied.example', port: 443, allowed: false, kind: 'tunnel' },
    ]));
    expect(await bridgesLeft()).toBe(0);
  });

  it('has no network besides the bridge: the host\'s address is unreachable and no name resolves', async () => {
    const before = seenPaths.length;
    const run = await runSandboxed(
      `(exec 3<>/dev/tcp/${hostAddress()}/${originPort}) 2>/dev/null; echo "direct exit=$?"; ` +
        `getent hosts example.com; echo "name exit=$?"`,
    );
    expect(run).toMatchObject({ killed: false, stdout: 'direct exit=1\nname exit=2\n' });
    expect(seenPaths.slice(before)).toEqual([]);
  });

  const curlReason = curlPath === null ? ' (skipped: curl not installed)' : '';
  it.skipIf(curlPath === null)(`lets curl, told of the proxy only by the environment, reach what is allowed and nothing else${curlReason}`, async () => {
    // --noproxy '' overrides NO_PROXY, which would otherwise send 127.0.0.1 to the sandbox's own loopback.
    const url = `http://127.0.0.1:${originPort}`;
    const before = seenPaths.length;
    const run = await runSandboxed(
      `curl -sS --noproxy '' ${url}/plain; curl -sS --noproxy '' --proxytunnel ${url}/tunnelled; ` +
        `curl -sS -w 'status=%{http_code}\\n' http://denied.example/; ` +
        `curl -sS https://denied.example/; echo "https exit=$?"; ` +
        `curl -sS --noproxy '*' --max-time 5 http://${hostAddress()}:${originPort}/direct; echo "direct exit=$?"`,
    );
    expect(run.killed).toBe(false);
    expect(run.stdout).toMatch(/^hello from \/plain\nhello from \/tunnelled\n/);
    expect(run.stdout).toContain('refused denied.example: it is not on this run\'s network allow-list');
    expect(run.stdout).toContain('status=403\n');
    expect(run.stdout).toContain('https exit=56\n');
    expect(run.stderr).toContain('CONNECT tunnel failed, response 403');
    expect(run.stdout).toMatch(/direct exit=(7|28)\n/);
    expect(seenPaths.slice(before)).toEqual(['/plain', '/tunnelled']);
    expect(await bridgesLeft()).toBe(0);
  });
});

/** The host's own non-loopback address, which a sandbox without a network must not reach. */
function hostAddress(): string {
  return Object.values(networkInterfaces()).flat().find((address) => address?.family === 'IPv4' && !address.internal)?.address ?? '127.0.0.1';
}
