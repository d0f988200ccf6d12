import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { defaultStateDir, eventsDatabasePath } from '../../src/orchestrator/setup/state-directory.js';
import { freePort } from '../../src/store/testing/postgres-cluster.js';
import { describeWithPostgres, usePostgresCluster } from '../../src/store/testing/postgres-store-under-test.js';
import { createExampleRepository, runCli, type CliRun, type ExampleRepository } from '../testing/example-repository.js';
import { startColonyProcess } from '../testing/colony-process.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { countRows } from '../testing/postgres-rows.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const MODEL = 'sim?seed=4&latency=20..60';
const RUN_TIMEOUT_MS = 300_000;

/**
 * Runs `colony` in this process with `argv` until `landings` merges are in the store's log,
 * then calls `whileRunning` (the run still going) and stops the run, as Ctrl-C does.
 */
async function runUntilLanded(argv: string[], url: string, landings: number, whileRunning: () => Promise<void>): Promise<CliRun> {
  const stop = new AbortController();
  const running = runCli(argv, { signal: stop.signal });
  let ended = false;
  void running.finally(() => {
    ended = true;
  });
  while (!ended && (await countRows(url, 'events', "type = 'merge.landed'")) < landings) await new Promise((resolve) => setTimeout(resolve, 50));
  if (!ended) await whileRunning();
  stop.abort();
  return running;
}

describeWithPostgres('a run whose log and tasks are in PostgreSQL (--store)', () => {
  const postgres = usePostgresCluster();

  describeRuns('run end to end', () => {
    it(
      'runs, is steered live, stops and resumes in the store; every command reads it there, and its password shows nowhere',
      async () => {
        const cluster = postgres();
        const url = await cluster.database('run_in_store');
        const repo: ExampleRepository = createExampleRepository('toolbox');
        const printed: string[] = [];
        const colony = async (...args: string[]): Promise<CliRun> => {
          const result = await runCli([...args, '--repo', repo.dir, '--store', url]);
          printed.push(result.stdout, result.stderr);
          return result;
        };
        try {
          let live: CliRun | undefined;
          const stopped = await runUntilLanded(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--store', url, '--model', MODEL, '--workers', '3', '--quiet'], url, 1, async () => {
            live = await colony('workers', '2', '--reason', 'from the store', '--json');
          });
          printed.push(stopped.stdout, stopped.stderr);
          expect(stopped.code).toBe(1);
          // The run's process held the store's run lock: the change went to it, live.
          expect(live?.code).toBe(0);
          expect(JSON.parse(live?.stdout ?? '{}')).toMatchObject({ live: true });
          expect(stopped.stdout).toContain('--store URL');
          // The log is in the store, not in the state directory, which keeps only what is local.
          expect(existsSync(eventsDatabasePath(defaultStateDir(repo.dir)))).toBe(false);
          expect(await countRows(url, 'run_requests', "kind = 'workers' AND workers = 2")).toBe(1);
          const withoutStore = await runCli(['status', '--repo', repo.dir]);
          expect(withoutStore.code).toBe(2);

          const status = await colony('status');
          expect(status.stdout).toMatch(/^Run \S+: stopped, wall time/);
          // No process holds the lock now: steering is recorded here, for the resumed run to act on.
          const said = await colony('say', 'Keep each module small.', '--json');
          expect(said.code).toBe(0);
          expect(JSON.parse(said.stdout)).toMatchObject({ live: false, recipient: { role: 'root-planner' } });

          const resumed = await colony('resume', '--quiet');
          expect(resumed.code).toBe(0);
          await expectGreenRun(repo, url);

          const events = await colony('events', '--type', 'run.ended', '--json');
          expect(events.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { data: { status: string } }).data.status)).toEqual(['stopped', 'done']);
          const analysis = await colony('analyze', '--json');
          const analysed = JSON.parse(analysis.stdout) as { runId: string; events: number };
        expect(analysed.events).toBe(await countRows(url, 'events', `run_id = '${analysed.runId}'`));
          const replayed = await colony('replay', '--json');
          expect(replayed.code).toBe(0);
          expect(JSON.parse(replayed.stdout)).toMatchObject({ status: { run: { state: 'done' } } });
          const green = await colony('green');
          expect(green.code).toBe(0);
          const andon = await colony('andon', '--json');
          expect(andon.code).toBe(2);
          expect(andon.stderr).toContain('has ended');

          // The password is in no output and no event.
          const { password } = cluster;
          expect(printed.filter((text) => text.includes(password))).toEqual([]);
          expect(await countRows(url, 'events', `data LIKE '%${password}%'`)).toBe(0);
        } finally {
          repo.cleanup();
        }
      },
      RUN_TIMEOUT_MS,
    );
  });

  describeRuns('a run whose process is killed', () => {
    it(
      'is refused to a second run on the store from another checkout while it goes, and taken up by colony resume once it is killed: PostgreSQL let its lock go with its connection',
      async () => {
        const cluster = postgres();
        const url = await cluster.database('killed_run');
        const repo = createExampleRepository('toolbox');
        const elsewhere = createExampleRepository('toolbox');
        const running = startColonyProcess(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--store', url, '--model', MODEL, '--workers', '3', '--quiet'], repo.dir);
        try {
          while ((await countRows(url, 'events', "type = 'merge.landed'")) < 1) await new Promise((resolve) => setTimeout(resolve, 50));
          // Another checkout, another state directory: only the store's lock is in the way, as on another machine.
          const second = await runCli(['run', join(elsewhere.dir, 'GOAL.md'), '--repo', elsewhere.dir, '--store', url, '--model', MODEL, '--quiet']);
          expect(second.code).toBe(2);
          expect(second.stderr).toMatch(/another colony run is working on the store database "killed_run" on 127\.0\.0\.1:\d+ \(postgres:\/\/\[redacted\]@127\.0\.0\.1:\d+\/killed_run\), from this machine or another/);
          running.child.kill('SIGKILL');
          await running.ended;
          const status = await runCli(['status', '--repo', repo.dir, '--store', url, '--json']);
          expect(JSON.parse(status.stdout)).toMatchObject({ run: { state: 'interrupted' } });
          const resumed = await runCli(['resume', '--repo', repo.dir, '--store', url, '--quiet']);
          expect(resumed.code).toBe(0);
          await expectGreenRun(repo, url);
        } finally {
          running.child.kill('SIGKILL');
          await running.ended;
          repo.cleanup();
          elsewhere.cleanup();
        }
      },
      RUN_TIMEOUT_MS,
    );
  });

  it('takes the store from colony.toml or COLONY_STORE with the password from PGPASSWORD, and refuses one with a password in it', async () => {
    const cluster = postgres();
    const url = await cluster.database('configured_store');
    const withoutPassword = url.replace(`:${cluster.password}@`, '@');
    const repo = createExampleRepository('toolbox');
    const previous = process.env.PGPASSWORD;
    process.env.PGPASSWORD = cluster.password;
    try {
      // An empty store: the commands reach it, and it has no run.
      const fromVariable = await runCli(['status', '--repo', repo.dir], { env: { COLONY_STORE: withoutPassword } });
      expect(fromVariable.stderr).toContain('there is no run in the store database "configured_store"');
      expect(fromVariable.code).toBe(2);
      writeFileSync(join(repo.dir, 'colony.toml'), `store = "${withoutPassword}"\n`);
      const fromFile = await runCli(['events', '--repo', repo.dir]);
      expect(fromFile).toMatchObject({ code: 0, stdout: '' });

      // A store nobody answers at: said plainly within seconds, without the password.
      const nowhere = url.replace(`:${cluster.port}/`, `:${await freePort()}/`);
      const unreachable = await runCli(['status', '--repo', repo.dir, '--store', nowhere]);
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toMatch(/^colony: Could not reach PostgreSQL: database "configured_store" on 127\.0\.0\.1:\d+ .*Check that the server is running/);
      expect(unreachable.stderr).not.toContain(cluster.password);

      writeFileSync(join(repo.dir, 'colony.toml'), `store = "${url}"\n`);
      const refused = await runCli(['status', '--repo', repo.dir]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('store carries a password');
      expect(refused.stderr).not.toContain(cluster.password);
      const notAUrl = await runCli(['status', '--repo', repo.dir, '--store', 'mysql://me:secret@db/colony']);
      expect(notAUrl.code).toBe(2);
      expect(notAUrl.stderr).toContain('expected a PostgreSQL URL');
      expect(notAUrl.stderr).not.toContain('secret');
    } finally {
      if (previous === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = previous;
      repo.cleanup();
    }
  });
});
