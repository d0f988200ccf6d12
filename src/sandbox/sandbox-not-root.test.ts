import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeCgroupDirectory } from './cgroups/cgroup-files.js';
import { readCgroupSources, resolveCgroupLayout } from './cgroups/cgroup-layout.js';
import { confinedTestsUnavailable, makeTestRoot, processesOf } from './testing/confined-test-support.js';

const UID = 2_000_008_001;
const GID = 2_000_000_000;
const resolved = resolveCgroupLayout(readCgroupSources());
const v1 = resolved.ok && resolved.layout.version === 1 ? resolved.layout : null;
const unavailable = confinedTestsUnavailable('bubblewrap') ?? (v1 === null ? 'the test delegates cgroup v1 hierarchies' : null);

/**
 * A harness that is not root: run as another uid, in cgroups delegated to it the v1 way (its
 * own directory, owned by it), it opens the sandbox itself. Commands keep its uid, inside a
 * user namespace, with its home directory hidden; the unshare fallback refuses.
 */
describe.skipIf(unavailable !== null)(`a harness that is not root${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
  let root = '';
  const delegated = v1 === null ? [] : [v1.memory, v1.pids, v1.freezer].map((parent) => join(parent, `colony-test-delegated-${process.pid}`));
  let report: {
    bubblewrap: { ok: boolean; summary?: string; problem?: string };
    unshare: { ok: boolean; problem?: string; fix?: string };
    result: { exitCode: number | null; output: string; startError: string | null } | null;
  };

  beforeAll(async () => {
    root = makeTestRoot('colony-not-root-');
    const home = join(root, 'home');
    const workspace = join(root, 'workspace');
    for (const directory of [home, workspace, join(root, 'tmp')]) {
      mkdirSync(directory);
      chownSync(directory, UID, GID);
    }
    writeFileSync(join(home, 'secret.txt'), 'the user’s own secret\n');
    for (const directory of delegated) {
      mkdirSync(directory);
      for (const path of [directory, join(directory, 'cgroup.procs'), join(directory, 'tasks')]) chownSync(path, UID, GID);
    }
    const input = { runId: `not-root-${process.pid}`, workspace, spillDir: join(workspace, '.spill'), command: `id -u; cat ${home}/secret.txt; echo x > /etc/colony-not-root; echo made > made.txt` };
    // As root: join the delegated cgroups, then become the other uid and run the harness.
    const launcher = 'for f in $DELEGATED; do echo $$ > "$f/cgroup.procs"; done; exec setpriv --reuid "$RUN_UID" --regid "$RUN_GID" --clear-groups -- "$@"';
    const child = spawn('/bin/sh', ['-c', launcher, 'sh', process.execPath, '--import', 'tsx', resolve(import.meta.dirname, 'testing', 'open-sandbox-as-is.ts'), JSON.stringify(input)], {
      cwd: resolve(import.meta.dirname, '..', '..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: join(root, 'tmp'), DELEGATED: delegated.join(' '), RUN_UID: String(UID), RUN_GID: String(GID) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((done) => child.on('close', done));
    if (code !== 0) throw new Error(`the harness as uid ${UID} failed (${String(code)}): ${stderr}`);
    report = JSON.parse(stdout);
  }, 60_000);

  afterAll(async () => {
    for (const directory of delegated) {
      for (const left of readdirSync(directory, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
        await removeCgroupDirectory(join(directory, left.name));
      }
      await removeCgroupDirectory(directory);
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('opens bubblewrap, running commands as its own uid with its home directory hidden', () => {
    expect(report.bubblewrap.ok).toBe(true);
    expect(report.bubblewrap.summary).toMatch(new RegExp(`as the harness's own uid ${UID} .*not root, so agents are not separated from each other by uid; its home directory is hidden`));
    const output = report.result?.output ?? '';
    expect(report.result?.startError).toBeNull();
    expect(output.split('\n')[0]).toBe(String(UID));
    expect(output).toContain('No such file or directory');
    expect(output).not.toContain('the user’s own secret');
    expect(output).toMatch(/Read-only file system/);
    expect(existsSync(join(root, 'workspace', 'made.txt'))).toBe(true);
  });

  it('refuses the unshare fallback, which needs root', () => {
    expect(report.unshare).toMatchObject({ ok: false, error: expect.stringMatching(/needs root/), fix: expect.stringMatching(/bubblewrap/) });
  });

  it('leaves no process and no cgroup of its run behind', () => {
    expect(processesOf(UID)).toEqual([]);
    for (const directory of delegated) expect(readdirSync(directory, { withFileTypes: true }).filter((entry) => entry.isDirectory())).toEqual([]);
  });
});
