import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';
import { DEFAULT_SANDBOX_GID, DEFAULT_SANDBOX_UID_BASE } from '../../src/sandbox/sandbox.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';

const RUN_TIMEOUT_MS = 300_000;
const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));
const isRoot = process.getuid?.() === 0;
const hasBubblewrap = existsSync('/usr/bin/bwrap');
const required = process.env['COLONY_REQUIRE_SANDBOX_TESTS'] === '1';

let repo: ExampleRepository;
let escapeMarker: string;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  escapeMarker = `/etc/colony-escape-${process.pid}-${Date.now()}`;
});

afterEach(() => {
  repo.cleanup();
});

/**
 * The project's test command, as the goal states it, tries to get out before it runs the tests:
 * it says who it runs as, writes to /etc and looks into colony's state directory. The simulated
 * agents run it like any command a model would write.
 */
function plantHostileTestCommand(): void {
  setTestCommand(
    `echo uid=$(id -u); (touch ${escapeMarker} 2>&1 || true); (ls ${defaultStateDir(repo.dir)} 2>&1 | head -3 || true); ` +
      `(head -c 15 ${join(defaultStateDir(repo.dir), 'colony.db')} 2>&1 || true); ` +
      '(git config --get remote.origin.url 2>&1 || true); node scripts/test.js',
  );
  // A credential a user or a CI system left in the repository's config.
  repo.git('remote', 'add', 'origin', 'https://x-access-token:ghs_PLANTED_TOKEN@github.com/acme/toolbox.git');
}

/** Changes the project's test command in the goal's colony-spec, and commits the goal. */
function setTestCommand(command: string): void {
  const goalPath = join(repo.dir, 'GOAL.md');
  const goal = readFileSync(goalPath, 'utf8');
  const changed = goal.replace('"test": "node scripts/test.js"', `"test": ${JSON.stringify(command)}`);
  expect(changed).not.toBe(goal);
  writeFileSync(goalPath, changed);
  repo.git('commit', '-qam', 'another test command');
}

describe.skipIf(!required && !(isRoot && hasBubblewrap))('colony run with the sandbox (needs root and bubblewrap)', () => {
  it("confines every command of the run's agents, and the run still finishes green", async () => {
    plantHostileTestCommand();
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '4', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true }, sandbox: 'bubblewrap' });
    expect(existsSync(escapeMarker)).toBe(false);
    // Agents of other runs on this machine cannot enter the state directory: only its owner and this run's group may.
    const state = statSync(defaultStateDir(repo.dir));
    expect(state.mode & 0o777).toBe(0o710);
    expect(state.gid).toBeGreaterThan(DEFAULT_SANDBOX_GID);

    const events = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'sandbox.opened,tool.ended'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ColonyEvent);
    expect(events[0]).toMatchObject({ type: 'sandbox.opened', data: { method: 'bubblewrap', network: 'none' } });
    const outputs = events.flatMap((event) => (event.type === 'tool.ended' && event.data.name === 'run_command' ? [event.data.output] : []));
    expect(outputs.length).toBeGreaterThan(0);
    for (const output of outputs) {
      const uid = Number(/uid=(\d+)/.exec(output)?.[1]);
      expect(uid).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID_BASE);
      expect(output).toContain('Read-only file system');
      // The state directory is hidden, though it lies in the git directory commands read: an
      // empty directory where it should be, with nothing of the event log in it.
      expect(output).not.toMatch(/colony\.db\s/);
      expect(output).not.toContain('SQLite format');
      expect(output).toContain('https://[redacted]@github.com/acme/toolbox.git');
      expect(output).not.toContain('ghs_PLANTED_TOKEN');
    }
  }, RUN_TIMEOUT_MS);

  it('runs to done in a repository under a directory only root may enter, changing no permission, and its agents cannot read what lies beside it', async () => {
    // What `mktemp -d` makes, and what a home directory is: only its owner may enter.
    const privateDir = dirname(repo.dir);
    chmodSync(privateDir, 0o700);
    const secret = join(privateDir, 'secret.txt');
    writeFileSync(secret, 'SECRET_BESIDE_THE_REPOSITORY\n');
    setTestCommand(`echo uid=$(id -u); (cat ${secret} 2>&1 || true); (cat ../../../../secret.txt 2>&1 || true); (ls ${privateDir} 2>&1 || true); node scripts/test.js`);
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true }, sandbox: 'bubblewrap' });
    expect(statSync(privateDir).mode & 0o777).toBe(0o700);

    const events = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'tool.ended'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ColonyEvent);
    const outputs = events.flatMap((event) => (event.type === 'tool.ended' && event.data.name === 'run_command' ? [event.data.output] : []));
    expect(outputs.length).toBeGreaterThan(0);
    for (const output of outputs) {
      expect(Number(/uid=(\d+)/.exec(output)?.[1])).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID_BASE);
      expect(output).not.toContain('SECRET_BESIDE_THE_REPOSITORY');
      expect(output).toContain(`cat: ${secret}: No such file or directory`);
      // Under /tmp, the sandbox's own, bubblewrap makes the way to the workspace: listed, it holds the repository's name alone.
      expect(output).not.toMatch(/^secret\.txt$/m);
      expect(output).toMatch(/^toolbox$/m);
    }
  }, RUN_TIMEOUT_MS);

  it('refuses to start when bubblewrap is missing, says how to fix it, and records nothing', () => {
    // A mount namespace of its own where bwrap is not an executable stands in for a machine without bubblewrap.
    const script = 'mount --bind /dev/null /usr/bin/bwrap && exec "$0" "$@"';
    const run = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, process.execPath, COLONY, 'run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("colony: cannot confine agents' commands here: bwrap is not installed");
    expect(run.stderr).toMatch(/apt-get install bubblewrap/);
    expect(run.stderr).toContain('--sandbox none');
    expect(existsSync(join(defaultStateDir(repo.dir), 'colony.db'))).toBe(false);
  });

  it('runs unconfined only when the user says --sandbox none, and says so', async () => {
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--sandbox', 'none', '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('colony: WARNING: --sandbox none: every command an agent writes runs unconfined');
    const opened = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'sandbox.opened'])).stdout.trim();
    expect(JSON.parse(opened)).toMatchObject({ data: { method: 'none', summary: expect.stringContaining('NOT confined') } });
  }, RUN_TIMEOUT_MS);

  it('lets commands reach only the hosts of --network-allow, through the proxy, and records each request', async () => {
    const server = createServer((_request, response) => response.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const through = `curl -sS --noproxy '' --proxy "$HTTP_PROXY"`;
      setTestCommand(`${through} http://127.0.0.1:${port}/hello; ${through} -o /dev/null -w 'denied: %{http_code}\\n' http://denied.example/; node scripts/test.js`);
      const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--network-allow', '127.0.0.1', '--json']);
      expect(result.code).toBe(0);
      const events = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'network.requested,tool.ended'])).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as ColonyEvent);
      const outputs = events.flatMap((event) => (event.type === 'tool.ended' && event.data.name === 'run_command' ? [event.data.output] : []));
      expect(outputs.length).toBeGreaterThan(0);
      for (const output of outputs) {
        expect(output).toContain('hello from the host');
        expect(output).toContain('denied: 403');
      }
      const requests = events.flatMap((event) => (event.type === 'network.requested' ? [event.data] : []));
      expect(requests).toContainEqual({ host: '127.0.0.1', port, allowed: true });
      expect(requests).toContainEqual({ host: 'denied.example', port: 80, allowed: false });
    } finally {
      server.close();
    }
  }, RUN_TIMEOUT_MS);

  it('refuses network settings that contradict each other or need a sandbox', async () => {
    const both = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--network', 'allow', '--network-allow', 'registry.npmjs.org']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--network-allow');
    const unconfined = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--sandbox', 'none', '--network-allow', 'registry.npmjs.org']);
    expect(unconfined.code).toBe(2);
    expect(unconfined.stderr).toContain('--sandbox none');
    const tiny = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--command-memory', '1K']);
    expect(tiny.code).toBe(2);
    expect(tiny.stderr).toContain('--command-memory is too small: it must be a whole number of at least 8388608, got 1024');
  });
});
