import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessResult, RunProcess } from '../../src/sandbox/process/types.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { DEFAULT_SANDBOX_GID } from '../../src/sandbox/sandbox.js';
import { confinedTestsUnavailable, leftoverCommandCgroups, leftoverProcessesOf, openTestSandbox } from '../../src/sandbox/testing/confined-test-support.js';
import type { ConfinedMethod } from './shell-support.js';

/**
 * A repository in a directory only its owner may enter (what `mktemp -d` makes, in a home that
 * is itself 0700 when run as root), with the state directory in its git directory, as a run
 * lays it out. The agent runs as its own uid, which may not enter that directory; the sandbox
 * covers it and shows the agent only its workspace and the git directory. Next to the
 * repository lie a secret and another project, which must stay out of the agent's reach by
 * every path it can write.
 */
for (const [method, uidBase] of [['bubblewrap', 2_000_009_000], ['unshare', 2_000_009_500]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, a private directory above the repository, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const runId = `adversarial-private-${method}`;
    let sandbox: Sandbox;
    let outer = '';
    let repo = '';
    let state = '';
    let workspace = '';
    let secret = '';
    let runner: RunProcess;
    const run = (command: string): Promise<ProcessResult> => runner({ command, cwd: workspace, timeoutMs: 10_000, killGraceMs: 300 });
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@colony.invalid', ...args], { cwd, encoding: 'utf8' });

    beforeAll(async () => {
      // Outside /tmp and /var/tmp, which the unshare fallback replaces whole: the covering is what is tested.
      outer = mkdtempSync(join(homedir(), '.colony-adversarial-private-'));
      expect(statSync(outer).mode & 0o777).toBe(0o700);
      secret = join(outer, 'secret.txt');
      writeFileSync(secret, 'the user’s secret\n');
      mkdirSync(join(outer, 'other-project'));
      writeFileSync(join(outer, 'other-project', 'notes.txt'), 'another project\n');
      repo = join(outer, 'repo');
      execFileSync('git', ['init', '-q', '-b', 'main', repo]);
      writeFileSync(join(repo, 'readme.md'), 'first\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'first');
      // As a run makes it: the state directory in the git directory, open to the run's group only.
      state = join(repo, '.git', 'colony');
      mkdirSync(join(state, 'workspaces'), { recursive: true });
      writeFileSync(join(state, 'colony.db'), 'the harness state\n');
      chownSync(state, 0, DEFAULT_SANDBOX_GID);
      chmodSync(state, 0o710);
      workspace = join(state, 'workspaces', 'worker');
      git(repo, 'worktree', 'add', '-q', '-b', 'worker', workspace);
      execFileSync('chgrp', ['-R', String(DEFAULT_SANDBOX_GID), workspace]);
      execFileSync('chmod', ['-R', 'g+w', workspace]);
      execFileSync('find', [workspace, '-type', 'd', '-exec', 'chmod', 'g+s', '{}', '+']);
      sandbox = await openTestSandbox({ method, runId, uidBase });
      expect(sandbox.coversPrivateDirectories).toBe(true);
      const gitDir = join(repo, '.git');
      runner = sandbox.runnerFor({
        agentId: 'worker',
        workspace,
        hidden: [state],
        spillDir: join(state, 'output', 'worker'),
        shareNetwork: false,
        extras: { binds: [{ source: gitDir, target: gitDir, writable: false }], prelude: '', environment: {} },
      });
    });
    afterEach(async () => {
      expect(await leftoverProcessesOf(uidBase + 1)).toEqual([]);
      expect(leftoverCommandCgroups(runId)).toEqual([]);
    });
    afterAll(async () => {
      await sandbox?.close();
      if (outer !== '') rmSync(outer, { recursive: true, force: true });
    });

    it('runs as the agent’s own uid, with no capabilities and no_new_privs, and works in its workspace', async () => {
      const result = await run('id -u; id -G; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status; echo changed >> readme.md && git status --short');
      expect(result.startError).toBeNull();
      expect(result.exitCode).toBe(0);
      const lines = result.output.trim().split('\n');
      expect(lines.slice(0, 2)).toEqual([String(uidBase + 1), String(DEFAULT_SANDBOX_GID)]);
      for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(result.output).toMatch(new RegExp(`^${set}:\\s+0000000000000000$`, 'm'));
      expect(result.output).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(result.output).toContain(' M readme.md');
      expect(readFileSync(join(workspace, 'readme.md'), 'utf8')).toBe('first\nchanged\n');
    });

    it('sees a workspace that is a mount of its own (an overlay workspace) in the git directory as mounted, not the directory under it', async () => {
      const mounted = join(state, 'workspaces', 'mounted');
      mkdirSync(mounted);
      execFileSync('mount', ['-t', 'tmpfs', '-o', `mode=2770,gid=${DEFAULT_SANDBOX_GID}`, 'colony-test-workspace', mounted]);
      try {
        writeFileSync(join(mounted, 'on-the-mount.txt'), 'from the mounted workspace\n');
        const gitDir = join(repo, '.git');
        const other = sandbox.runnerFor({
          agentId: 'mounted',
          workspace: mounted,
          hidden: [state],
          spillDir: join(state, 'output', 'mounted'),
          shareNetwork: false,
          extras: { binds: [{ source: gitDir, target: gitDir, writable: false }], prelude: '', environment: {} },
        });
        const result = await other({ command: 'cat on-the-mount.txt && echo written > by-the-agent.txt', cwd: mounted, timeoutMs: 10_000, killGraceMs: 300 });
        expect(result.startError).toBeNull();
        expect(result.output).toBe('from the mounted workspace\n');
        expect(readFileSync(join(mounted, 'by-the-agent.txt'), 'utf8')).toBe('written\n');
        expect(await leftoverProcessesOf(uidBase + 2)).toEqual([]);
      } finally {
        execFileSync('umount', [mounted]);
      }
    });

    it('cannot read a file beside the repository by any path it can write', async () => {
      const fromWorkspace = relative(workspace, secret);
      const result = await run(
        [
          `cat ${fromWorkspace}`,
          `cat ${secret}`,
          `cat /proc/self/root${secret}`,
          `cat /proc/1/root${secret}`,
          `ln -s ${secret} link && cat link`,
          `ln -s ${outer} outer && cat outer/secret.txt`,
          `ln -s ${relative(workspace, outer)} up && cat up/secret.txt`,
          `cat ${join(outer, 'other-project', 'notes.txt')}`,
          `cat ${join(repo, 'readme.md')}`,
          'echo done',
        ].join('; '),
      );
      expect(result.output).toContain('done');
      expect(result.output).not.toContain('the user’s secret');
      expect(result.output).not.toContain('another project');
      expect(result.output).not.toContain('first\n');
      expect(result.output.match(/No such file or directory|Permission denied/g)?.length).toBe(9);
    });

    it('cannot list the private directory, nor find what else is in it', async () => {
      const result = await run(`ls -a ${outer}; echo "ls: $?"; ls -a /proc/self/root${outer}; echo "proc: $?"; ls -a ${repo}; echo "repo: $?"; ls -d ${join(outer, 'other-project')}; echo "other: $?"`);
      expect(result.output).toContain(`cannot open directory '${outer}': Permission denied`);
      expect(result.output).toContain('ls: 2');
      expect(result.output).toContain('proc: 2');
      expect(result.output).toContain('repo: 2');
      expect(result.output).toContain(`cannot access '${join(outer, 'other-project')}': No such file or directory`);
      expect(result.output).not.toContain('secret.txt');
    });

    it('still does not see the harness’s state, and cannot write the git directory or the private one', async () => {
      const result = await run(`ls -A ${state} ${join(state, 'workspaces')}; cat ${join(state, 'colony.db')}; touch ${join(repo, '.git', 'planted')}; touch ${join(outer, 'planted')}; umount ${outer}; echo done`);
      // Only the way to its own workspace, as where the state directory is not in a private one.
      expect(result.output).toContain(`${state}:\nworkspaces\n\n${join(state, 'workspaces')}:\nworker\n`);
      expect(result.output).not.toContain('the harness state');
      expect(result.output).toContain(`cat: ${join(state, 'colony.db')}: No such file or directory`);
      expect(result.output).toContain('done');
      expect(() => statSync(join(repo, '.git', 'planted'))).toThrow();
      expect(() => statSync(join(outer, 'planted'))).toThrow();
      expect(readFileSync(secret, 'utf8')).toBe('the user’s secret\n');
    });
  });
}
