import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalProcessRunner } from '../../sandbox/process/process-runner.js';
import { confinedTestsUnavailable, leftoverProcessesOf } from '../../sandbox/testing/confined-test-support.js';
import { createMergeTestSetup, type MergeTestSetup } from '../../workspace/testing/merge-setup.js';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { openCommandRunners, unconfinedCommandRunners, type CommandRunners } from '../setup/command-sandbox.js';
import { checkCommit, type CheckCommitOptions } from './green-snapshot.js';
import { DEFAULT_SANDBOX_SETTINGS } from '../../events/run-settings.js';

function optionsFor(repo: Repository, viewsDir: string, commands: CommandRunners, overrides: Partial<CheckCommitOptions>): CheckCommitOptions {
  return { repo, viewsDir, commit: 'HEAD', command: 'true', commands, timeoutMs: 20_000, signal: new AbortController().signal, ...overrides };
}

async function worktrees(repo: Repository): Promise<string> {
  return (await runGit(repo.root, ['worktree', 'list', '--porcelain'])).stdout;
}

describe('checkCommit, unconfined', () => {
  let setup: MergeTestSetup;
  let viewsDir: string;
  let withOk: string;
  let withoutOk: string;

  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'ok': 'yes\n' });
    withOk = await setup.mainCommit();
    await setup.temporary.git(['rm', '--quiet', 'ok']);
    withoutOk = await setup.temporary.commitAll('Remove ok');
    viewsDir = join(setup.temporary.base, 'views');
  });

  afterEach(async () => {
    await setup.temporary.remove();
  });

  const check = (overrides: Partial<CheckCommitOptions>) => checkCommit(optionsFor(setup.repo, viewsDir, unconfinedCommandRunners(), overrides));

  it('passes on a commit where the check passes and fails on one where it fails, and removes its view', async () => {
    const command = 'cat ok && git rev-parse HEAD';
    const passed = await check({ commit: withOk, command });
    expect(passed).toMatchObject({ ok: true, check: { commit: withOk, command, passed: true, exitCode: 0, timedOut: false, outputTail: `yes\n${withOk}` } });
    const failed = await check({ commit: withoutOk.slice(0, 10), command });
    expect(failed).toMatchObject({ ok: true, check: { commit: withoutOk, passed: false, exitCode: 1, timedOut: false } });
    expect(failed.ok ? failed.check.failures : []).toEqual(['cat: ok: No such file or directory']);
    expect(readdirSync(viewsDir)).toEqual([]);
    expect(await worktrees(setup.repo)).not.toContain(viewsDir);
  });

  it("reads failure lines from all of a long report, not only the head and tail an agent's command keeps", async () => {
    // 200 KB of passing lines around one failure: an agent's command would keep 32 KB at each end.
    const command = 'for i in $(seq 1 4000); do echo "ok $i - a passing test with a long enough name"; done; echo "not ok 4001 - the one in the middle"; for i in $(seq 1 4000); do echo "ok $i - another passing test"; done; exit 1';
    const result = await check({ commit: withOk, command });
    expect(result.ok ? result.check.failures : []).toEqual(['not ok - the one in the middle']);
  });

  it('ends a check that runs past its time as failed and timed out, and still removes the view', async () => {
    const result = await check({ commit: withOk, command: 'echo started; sleep 60', timeoutMs: 1_000 });
    expect(result).toMatchObject({ ok: true, check: { passed: false, timedOut: true, exitCode: null } });
    const timedOut = result.ok ? result.check : null;
    expect(timedOut?.outputTail).toBe('started\nthe check timed out after 1 s and was stopped');
    expect(timedOut?.failures).toEqual(['the check timed out after 1 s']);
    expect(readdirSync(viewsDir)).toEqual([]);
    expect(await worktrees(setup.repo)).not.toContain(viewsDir);
  });

  it('has no result when stopped, before or while the check runs, and removes the view', async () => {
    const before = new AbortController();
    before.abort('the run was stopped');
    expect(await check({ commit: withOk, signal: before.signal })).toEqual({ ok: false, error: `the check of ${withOk.slice(0, 12)} was stopped before it started: the run was stopped` });
    expect(existsSync(viewsDir)).toBe(false);
    const during = new AbortController();
    const running = check({ commit: withOk, command: 'touch started; sleep 60', signal: during.signal });
    // Stop it once the command is running in its view.
    for (;;) {
      const views = existsSync(viewsDir) ? readdirSync(viewsDir) : [];
      if (views.some((view) => existsSync(join(viewsDir, view, 'started')))) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    during.abort('the run was stopped');
    expect(await running).toEqual({ ok: false, error: `the check of ${withOk.slice(0, 12)} was stopped before it ended: the run was stopped` });
    expect(readdirSync(viewsDir)).toEqual([]);
  });

  it('has no result for a commit git does not know, or a view git cannot make', async () => {
    const unknown = await check({ commit: 'a'.repeat(40) });
    expect(unknown.ok ? '' : unknown.error).toContain(`colony could not find the commit ${'a'.repeat(40)}`);
    // A file where the views directory should be: git cannot make the view under it.
    const blocked = join(setup.temporary.base, 'not-a-directory');
    await setup.temporary.write('../not-a-directory', 'a file\n');
    const unmade = await checkCommit(optionsFor(setup.repo, blocked, unconfinedCommandRunners(), { commit: withOk }));
    expect(unmade.ok ? '' : unmade.error).toContain(`colony could not check out ${withOk.slice(0, 12)} to run the check`);
  });

  it('fails a check whose command cannot start, saying why', async () => {
    // No bash on this PATH: the runner cannot start the command.
    const runner = createLocalProcessRunner({ parentEnvironment: { PATH: join(setup.temporary.base, 'no-programs') } });
    const commands: CommandRunners = { ...unconfinedCommandRunners(), forAgent: () => runner };
    const result = await checkCommit(optionsFor(setup.repo, viewsDir, commands, { commit: withOk }));
    expect(result).toMatchObject({ ok: true, check: { passed: false, exitCode: null, timedOut: false } });
    expect(result.ok ? result.check.outputTail : '').toMatch(/^colony could not start the check: could not start bash: /);
    expect(readdirSync(viewsDir)).toEqual([]);
  });
});

const cannotConfine = confinedTestsUnavailable('bubblewrap');

describe.skipIf(cannotConfine !== null)(`checkCommit in the bubblewrap sandbox${cannotConfine === null ? '' : ` (skipped: ${cannotConfine})`}`, () => {
  let root: string;
  let repo: Repository;
  let commit: string;
  let stateDir: string;
  let viewsDir: string;
  let runners: CommandRunners;
  let server: Server;
  let port = 0;
  const escapeInHome = join(homedir(), `colony-green-escape-${process.pid}`);

  beforeAll(async () => {
    // Outside /tmp, which the sandbox replaces: the repository is on the file system commands see.
    root = mkdtempSync('/var/tmp/colony-green-');
    chmodSync(root, 0o711);
    const checkout = join(root, 'repo');
    const git = async (args: readonly string[], cwd = root): Promise<void> => {
      const result = await runGit(cwd, args);
      if (result.code !== 0) throw new Error(describeFailure(args, result));
    };
    await git(['init', '--quiet', '--initial-branch=main', checkout]);
    await git(['commit', '--quiet', '--allow-empty', '-m', 'Start'], checkout);
    const opened = await openRepository(checkout);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    commit = (await runGit(checkout, ['rev-parse', 'HEAD'])).stdout.trim();
    stateDir = join(root, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    viewsDir = join(stateDir, 'views');
    const opening = await openCommandRunners({
      settings: DEFAULT_SANDBOX_SETTINGS,
      runId: `green-snapshot-test-${process.pid}`,
      repo,
      stateDir,
      workDirs: [viewsDir],
      record: () => undefined,
    });
    if (!opening.ok) throw new Error(opening.error);
    runners = opening.runners;
    server = createServer((_, response) => response.end('served by the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
    await runners?.close();
    rmSync(escapeInHome, { force: true });
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it('runs as a uid of its own that may write its view and nothing else, with no network', async () => {
    const reach = `require('net').connect(${port}, '127.0.0.1').on('connect', () => console.log('reached the host')).on('error', (error) => console.log('no network: ' + error.code))`;
    const command = [
      'echo "uid $(id -u)"',
      'touch made-in-view && echo wrote the view',
      `touch '${repo.root}/escaped' 2>/dev/null && echo wrote the repository`,
      `touch '${repo.gitDir}/escaped' 2>/dev/null && echo wrote the git directory`,
      `touch '${escapeInHome}' 2>/dev/null && echo wrote the home directory`,
      `touch '${stateDir}/escaped' 2>/dev/null && echo wrote the state directory`,
      'echo "head $(git rev-parse HEAD)"',
      'echo "interfaces $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" " ")"',
      `node -e "${reach}"`,
      // Without any network, npm says so at once instead of retrying for a minute.
      'echo "npm retries ${npm_config_fetch_retries:-default}"',
    ].join('\n');
    const result = await checkCommit(optionsFor(repo, viewsDir, runners, { commit, command }));
    if (!result.ok) throw new Error(result.error);
    const output = result.check.outputTail;
    expect(result.check.passed, output).toBe(true);
    const uid = Number(/^uid (\d+)$/m.exec(output)?.[1]);
    expect(uid).toBeGreaterThan(0);
    expect(uid).not.toBe(process.getuid?.());
    expect(output).toContain('wrote the view');
    expect(output).toContain(`head ${commit}`);
    expect(output).toContain('interfaces lo \n');
    expect(output).toContain('no network: ECONNREFUSED');
    expect(output).toContain('npm retries 0');
    for (const escaped of ['wrote the repository', 'wrote the git directory', 'wrote the home directory', 'wrote the state directory', 'reached the host']) {
      expect(output).not.toContain(escaped);
    }
    expect(existsSync(join(repo.root, 'escaped'))).toBe(false);
    expect(existsSync(join(repo.gitDir, 'escaped'))).toBe(false);
    expect(existsSync(escapeInHome)).toBe(false);
    expect(existsSync(join(stateDir, 'escaped'))).toBe(false);
    expect(readdirSync(viewsDir)).toEqual([]);
  });

  it('stops a check that runs past its time, leaving no process and no view behind', async () => {
    const result = await checkCommit(optionsFor(repo, viewsDir, runners, { commit, command: 'id -u; sleep 60 & sleep 60', timeoutMs: 1_000 }));
    if (!result.ok) throw new Error(result.error);
    expect(result.check).toMatchObject({ passed: false, timedOut: true });
    const uid = Number(result.check.outputTail.split('\n')[0]);
    expect(uid).toBeGreaterThan(0);
    expect(await leftoverProcessesOf(uid)).toEqual([]);
    expect(readdirSync(viewsDir)).toEqual([]);
    expect(await worktrees(repo)).not.toContain(viewsDir);
  });
});
