import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeWithPostgres, usePostgresCluster } from '../../src/store/testing/postgres-store-under-test.js';
import { createExampleRepository, runCli, unmountUnder, type CliRun } from '../testing/example-repository.js';
import { startColonyProcess } from '../testing/colony-process.js';
import { GIT_HTTP_ORIGIN_UNAVAILABLE, startGitHttpOrigin } from '../testing/git-http-origin.js';
import { countRows } from '../testing/postgres-rows.js';
import { expectGreenRun, status } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 300_000;

interface HostJson {
  readonly name: string;
  readonly state: string;
  readonly reason: string | null;
  readonly released: number;
}

/** Starts `colony worker` as a process of its own, as on another machine, with its own state directory. */
function startHost(name: string, url: string, cwd: string, extra: readonly string[] = []) {
  const state = mkdtempSync(join(tmpdir(), `colony-host-${name}-`));
  const host = startColonyProcess(['worker', '--store', url, '--name', name, '--state', state, '--workers', '3', '--quiet', ...extra], cwd);
  return {
    ...host,
    state,
    async stop(): Promise<CliRun> {
      host.child.kill('SIGTERM');
      return host.ended;
    },
    cleanup(): void {
      host.child.kill('SIGKILL');
      unmountUnder(state);
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** Waits until the store's log has an event matching `where` (SQL on the events table). */
async function waitForRow(url: string, where: string): Promise<void> {
  while ((await countRows(url, 'events', where)) < 1) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** No commit's change is on the trunk twice: `git patch-id` of every commit, none repeated. */
function duplicatePatches(gitDir: string, trunk: string): string[] {
  const log = execFileSync('git', ['--git-dir', gitDir, 'log', '-p', '--no-merges', trunk]);
  const ids = execFileSync('git', ['patch-id', '--stable'], { input: log }).toString().trim().split('\n').map((line) => line.split(' ')[0] ?? '');
  return ids.filter((id, index) => ids.indexOf(id) !== index);
}

describeWithPostgres('colony worker: hosts that work on a run in a shared store', () => {
  const postgres = usePostgresCluster();

  describeRuns('hosts end to end', () => {
    it(
      "a host on the run's machine lands on the repository itself, shows in the status, and leaves when the run ends",
      async () => {
        const url = await postgres().database('one_host');
        const repo = createExampleRepository('toolbox');
        // Started before the run, the host waits for it.
        const host = startHost('host-a', url, repo.dir);
        try {
          const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--store', url, '--model', 'sim?seed=4&latency=20..60', '--workers', '1', '--quiet']);
          expect(run.code).toBe(0);
          const { status: found } = await expectGreenRun(repo, url);
          const hosts = (found as unknown as { hosts: HostJson[] }).hosts;
          expect(hosts).toMatchObject([{ name: 'host-a' }]);
          // The host worked, and landed on the repository the run started in.
          const onHost = found.agents.filter((agent) => (agent as { host?: string | null }).host === 'host-a');
          expect(onHost.length).toBeGreaterThan(0);
          await waitForRow(url, "type = 'host.left' AND data LIKE '%the run finished%'");
          const stopped = await host.stop();
          expect(stopped.code).toBe(0);
          expect(stopped.stderr).toContain('colony worker host-a: left run');
          expect(stopped.stderr).toContain('stopped, after working on 1 run(s)');
          // Nothing of the host's workers is left in its state directory: no workspace, no mount.
          expect(readdirSync(join(host.state, 'workspaces')).filter((name) => !name.startsWith('.'))).toEqual([]);
          expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(host.state);
          const text = await runCli(['status', '--repo', repo.dir, '--store', url]);
          expect(text.stdout).toMatch(/Hosts: 0 working, 1 left/);
          expect(text.stdout).toMatch(/host-a: left at .*: the run finished/);
        } finally {
          host.cleanup();
          repo.cleanup();
        }
      },
      RUN_TIMEOUT_MS,
    );

    it(
      "a run on an origin whose process is killed is resumed from another checkout of the project; the host leaves with the process and comes back with the resume",
      async () => {
        const url = await postgres().database('resumed_elsewhere');
        const repo = createExampleRepository('toolbox');
        const originDir = join(repo.dir, '..', 'origin.git');
        execFileSync('git', ['init', '--quiet', '--bare', originDir]);
        const host = startHost('host-a', url, repo.dir, ['--origin', originDir]);
        const running = startColonyProcess(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--store', url, '--origin', originDir, '--model', 'sim?seed=4&latency=60..120', '--workers', '1', '--quiet'], repo.dir);
        const elsewhere = join(repo.dir, '..', 'elsewhere');
        try {
          await waitForRow(url, "type = 'merge.landed'");
          running.child.kill('SIGKILL');
          await running.ended;
          await waitForRow(url, "type = 'host.left' AND data LIKE '%process went away%'");
          // Another clone of the project, with no branch of the run's: the trunk comes from the origin.
          execFileSync('git', ['clone', '--quiet', repo.dir, elsewhere]);
          const resumed = await runCli(['resume', '--repo', elsewhere, '--store', url, '--quiet']);
          expect(resumed.stderr).toBe('');
          expect(resumed.code).toBe(0);
          const moved = { ...repo, dir: elsewhere, git: (...args: string[]) => execFileSync('git', args, { cwd: elsewhere, encoding: 'utf8' }) };
          const hosts = (await status(moved, url) as unknown as { hosts: HostJson[] }).hosts;
          const { status: found } = await expectGreenRun(moved, url, hosts[0]?.released ?? 0);
          expect(await countRows(url, 'events', "type = 'host.joined'")).toBe(2);
          const trunk = found.run.trunk ?? '';
          expect(execFileSync('git', ['--git-dir', originDir, 'rev-parse', `refs/heads/${trunk}`]).toString()).toBe(moved.git('rev-parse', trunk));
          expect(duplicatePatches(originDir, trunk)).toEqual([]);
        } finally {
          running.child.kill('SIGKILL');
          host.cleanup();
          unmountUnder(elsewhere);
          repo.cleanup();
        }
      },
      RUN_TIMEOUT_MS,
    );

    it.skipIf(GIT_HTTP_ORIGIN_UNAVAILABLE !== null)(
      'two hosts and the run land on an origin behind nginx and git http-backend with a password that shows nowhere; a host stopped mid-run lets its tasks go',
      async () => {
        const cluster = postgres();
        const url = await cluster.database('two_hosts');
        const origin = await startGitHttpOrigin();
        const repo = createExampleRepository('toolbox');
        origin.repository('toolbox');
        const originUrl = origin.urlWithPassword('toolbox');
        const first = startHost('host-a', url, repo.dir, ['--origin', originUrl]);
        const second = startHost('host-b', url, repo.dir, ['--origin', originUrl]);
        try {
          const running = runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--store', url, '--origin', originUrl, '--model', 'sim?seed=4&latency=150..300', '--workers', '1', '--quiet']);
          // Stopped while one of its workers runs: it lets the task go, and the others finish the run.
          await waitForRow(url, "type = 'task.claimed' AND data LIKE '%\"holder\":\"host-b/%'");
          const stopped = await second.stop();
          expect(stopped.code).toBe(0);
          const run = await running;
          if (run.code !== 0) {
            for (const type of ['green.checked', 'merge.conflicted', 'merge.attempted', 'handoff.submitted', 'host.left', 'host.joined']) {
              const evs = await runCli(['events', '--repo', repo.dir, '--store', url, '--json', '--type', type]);
              console.log(evs.stdout.split('\n').slice(0, 4).map((l) => l.slice(0, 1500)).join('\n'));
            }
          }
          expect(run.stderr + run.stdout).toContain('done');
          expect(run.code).toBe(0);
          const released = (await status(repo, url) as unknown as { hosts: HostJson[] }).hosts.find((host) => host.name === 'host-b')?.released ?? 0;
          expect(released).toBeGreaterThanOrEqual(1);
          const { status: found } = await expectGreenRun(repo, url, released);
          const hosts = (found as unknown as { hosts: HostJson[] }).hosts;
          expect(hosts.find((host) => host.name === 'host-b')).toMatchObject({ state: 'left', reason: 'the host was stopped' });
          expect(found.agents.some((agent) => (agent as { host?: string | null }).host === 'host-a')).toBe(true);

          // The origin has the run's trunk as the repository has it, every change on it once.
          const trunk = found.run.trunk ?? '';
          const originGit = join(origin.root, 'toolbox.git');
          expect(execFileSync('git', ['--git-dir', originGit, 'rev-parse', `refs/heads/${trunk}`]).toString()).toBe(repo.git('rev-parse', trunk));
          expect(duplicatePatches(originGit, trunk)).toEqual([]);

          // The origin's password is in no output, no event and no task.
          const printed = [run.stdout, run.stderr, stopped.stdout, stopped.stderr];
          expect(printed.filter((text) => text.includes(origin.password))).toEqual([]);
          expect(await countRows(url, 'events', `data LIKE '%${origin.password}%'`)).toBe(0);
          expect(await countRows(url, 'tasks', `body LIKE '%${origin.password}%' OR handoff LIKE '%${origin.password}%'`)).toBe(0);
          expect(readFileSync(join(repo.dir, '.git', 'config'), 'utf8')).not.toContain(origin.password);
          const started = JSON.parse((await runCli(['events', '--repo', repo.dir, '--store', url, '--type', 'run.started', '--json'])).stdout) as { data: { trunk: { origin: string } } };
          expect(started.data.trunk.origin).toBe(`http://127.0.0.1:${new URL(originUrl).port}/toolbox.git`);
        } finally {
          first.cleanup();
          second.cleanup();
          repo.cleanup();
          await origin.stop();
        }
      },
      RUN_TIMEOUT_MS,
    );
  });
});
