import { chmodSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';
import { useShellSandbox } from './shell-support.js';
import type { ConfinedMethod } from './shell-support.js';

for (const [method, uidBase] of [['bubblewrap', 2_000_004_000], ['unshare', 2_000_004_500]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, network, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const setup = useShellSandbox({ method, runId: `adversarial-network-${method}`, uidBase });
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((_, response) => response.end('served by the host\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('has only its own loopback when the network is off', async () => {
      const result = await setup.a.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
      expect(result.output).toBe('lo\n');
    });

    it('serves and reaches its own loopback', async () => {
      const script =
        "const net = require('net'); const server = net.createServer((c) => c.end('own loopback\\n'))" +
        ".listen(4321, '127.0.0.1', () => net.connect(4321, '127.0.0.1').on('end', () => server.close()).pipe(process.stdout));";
      const result = await setup.a.run(`node -e "${script}"`);
      expect(result.output).toBe('own loopback\n');
      expect(result.exitCode).toBe(0);
    });

    it('reaches a Unix socket the caller binds in, as the network bridge does, and nothing else of the host', async () => {
      const socketPath = join(setup.root, 'proxy.sock');
      const proxy = createNetServer((connection) => connection.end('through the bound socket\n'));
      await new Promise<void>((resolve) => proxy.listen(socketPath, resolve));
      chmodSync(socketPath, 0o666);
      try {
        const runner = setup.runnerForA({ extras: { binds: [{ source: socketPath, target: '/run/colony-egress/proxy.sock', writable: false }], prelude: '', environment: {} } });
        const script = "require('net').connect('/run/colony-egress/proxy.sock').pipe(process.stdout)";
        const result = await runner({ command: `node -e "${script}"; ls -A /run`, cwd: setup.a.workspace, timeoutMs: 10_000 });
        expect(result.output).toBe('through the bound socket\ncolony-egress\n');
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    });

    it('cannot reach the internet: curl fails to connect at once, not at its timeout', async () => {
      const result = await setup.a.run('curl -sS --max-time 8 http://1.1.1.1/; echo "curl exit $?"');
      // 7 is "failed to connect"; a silently dropped connection would end in 28, the timeout.
      expect(result.output).toContain('curl exit 7');
      expect(result.timedOut).toBe(false);
    });

    it('cannot open a socket with bash’s /dev/tcp', async () => {
      const result = await setup.a.run("bash -c 'exec 3<>/dev/tcp/1.1.1.1/80'");
      expect(result.exitCode).toBe(1);
      expect(result.output).toMatch(/Network is unreachable/);
    });

    it('cannot reach a server on the host’s loopback', async () => {
      const result = await setup.a.run(`curl -sS --max-time 8 http://127.0.0.1:${port}/; echo "curl exit $?"`);
      expect(result.output).toContain('curl exit 7');
      expect(result.output).not.toContain('served by the host');
    });

    it('reaches the host’s network when the confinement shares it', async () => {
      const runner = setup.runnerForA({ shareNetwork: true });
      const result = await runner({ command: `curl -sS --max-time 8 http://127.0.0.1:${port}/`, cwd: setup.a.workspace, timeoutMs: 10_000 });
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('served by the host\n');
    });
  });
}
