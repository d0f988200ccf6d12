import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isInside } from '../../src/sandbox/confinement/confinement-plan.js';
import type { RunProcess } from '../../src/sandbox/process/types.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { DEFAULT_SANDBOX_GID } from '../../src/sandbox/sandbox.js';
import {
  confinedTestsUnavailable,
  leftoverCommandCgroups,
  leftoverProcessesOf,
  openTestSandbox,
} from '../../src/sandbox/testing/confined-test-support.js';
import type { ConfinedMethod } from './shell-support.js';

/**
 * A worker's workspace is a git worktree whose `.git` is a file naming its admin directory in
 * the repository's own `.git`, outside the workspace, and the workspace itself lies in that
 * `.git`, in the run's state directory. Confined, that directory is read-only
 * under bubblewrap: git reads work, commits do not; landing work is merge_to_main's job, done
 * by the harness. (The unshare fallback gives commands a private /var/tmp, where this test's
 * repository lives, so it is exercised with bubblewrap only; there the admin directory is
 * root's and the agent's uid cannot write it either.)
 */
for (const [method, uidBase] of [['bubblewrap', 2_000_007_000]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, git metadata, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const runId = `adversarial-git-${method}`;
    let sandbox: Sandbox;
    let root = '';
    let repo = '';
    let state = '';
    let workspace = '';
    let run: (command: string) => ReturnType<RunProcess>;
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@colony.invalid', ...args], { cwd, encoding: 'utf8' });

    beforeAll(async () => {
      root = mkdtempSync('/var/tmp/colony-adversarial-git-');
      chmodSync(root, 0o755);
      repo = join(root, 'repo');
      execFileSync('git', ['init', '-q', '-b', 'main', repo]);
      writeFileSync(join(repo, 'readme.md'), 'first\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'first');
      // Where a run keeps its state and workspaces by default: inside the repository's git directory.
      state = join(repo, '.git', 'colony');
      workspace = join(state, 'workspaces', 'worker');
      git(repo, 'worktree', 'add', '-q', '-b', 'worker', workspace);
      // As the harness will: the workspace group-writable by the sandbox gid, new files too.
      execFileSync('chgrp', ['-R', String(DEFAULT_SANDBOX_GID), workspace]);
      execFileSync('chmod', ['-R', 'g+w', workspace]);
      execFileSync('find', [workspace, '-type', 'd', '-exec', 'chmod', 'g+s', '{}', '+']);
      sandbox = await openTestSandbox({ method, runId, uidBase });
      writeFileSync(join(state, 'colony.db'), 'the event log\n');
      // As a run does: the git directory shown read-only, the state directory in it hidden.
      const extras = { binds: [{ source: join(repo, '.git'), target: join(repo, '.git'), writable: false }], prelude: '', environment: {} };
      const runner = sandbox.runnerFor({ agentId: 'worker', workspace, hidden: [state], spillDir: join(root, 'spill'), shareNetwork: false, extras });
      run = (command) => runner({ command, cwd: workspace, timeoutMs: 10_000 });
    });
    afterEach(async () => {
      expect(await leftoverProcessesOf(uidBase + 1)).toEqual([]);
      expect(leftoverCommandCgroups(runId)).toEqual([]);
    });
    afterAll(async () => {
      await sandbox?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('has a .git file that points outside the workspace', () => {
      const pointer = readFileSync(join(workspace, '.git'), 'utf8').trim();
      expect(pointer).toBe(`gitdir: ${join(repo, '.git', 'worktrees', 'worker')}`);
      expect(isInside(workspace, pointer.slice('gitdir: '.length))).toBe(false);
    });

    it('reads git: status, log and diff work on the agent’s own changes', async () => {
      const result = await run('echo changed >> readme.md && git status --short && git log --oneline | wc -l && git diff --stat | tail -1');
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain(' M readme.md');
      expect(result.output).toContain('1 file changed, 1 insertion(+)');
    });

    it('writes its workspace inside the git directory, and sees nothing else of the state directory around it', async () => {
      const result = await run(`echo new > made.txt && git status --short; ls -A ${state}; cat ${join(state, 'colony.db')}`);
      expect(result.output).toContain('?? made.txt');
      expect(result.output).toContain('No such file or directory');
      expect(result.output).not.toContain('the event log');
      expect(result.output.split('\n')).toContain('workspaces');
      rmSync(join(workspace, 'made.txt'));
    });

    it('cannot commit or stage: the metadata is not the agent’s to write', async () => {
      const head = git(repo, 'rev-parse', 'worker');
      const result = await run("git add -A; echo \"add exit $?\"; git -c user.name=a -c user.email=a@b commit -qam 'by the agent'; echo \"commit exit $?\"");
      expect(result.output).toContain('add exit 128');
      expect(result.output).toContain('commit exit 128');
      expect(result.output).toMatch(/index\.lock': Read-only file system/);
      expect(git(repo, 'rev-parse', 'worker')).toBe(head);
    });
  });
}
