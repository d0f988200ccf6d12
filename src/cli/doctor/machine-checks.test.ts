import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunCgroups } from '../../sandbox/cgroups/types.js';
import { CGROUP_FIX } from '../../sandbox/sandbox-probe.js';
import type { OpenSandboxOptions, SandboxOpening } from '../../sandbox/sandbox.js';
import { checkSandbox, type SandboxProbes } from './sandbox-checks.js';
import { checkGit, checkNode, NODE_REQUIRED } from './tool-versions.js';

const directories: string[] = [];

afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory holding executables of these names, as PATH would. */
function programsDir(names: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'colony-doctor-programs-'));
  directories.push(dir);
  for (const name of names) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

const V2_SOURCES = {
  procSelfCgroup: '0::/colony.slice\n',
  mountInfo: '35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate',
};

function fakeRunCgroups(closed: string[]): RunCgroups {
  return {
    version: 2,
    directories: ['/sys/fs/cgroup/colony.slice/colony-doctor'],
    description: 'cgroup v2: /sys/fs/cgroup/colony.slice/colony-doctor',
    create: () => ({ ok: false, error: 'not in this test' }),
    close: async () => {
      closed.push('cgroups');
    },
  };
}

function probes(overrides: Partial<SandboxProbes> & { opened?: SandboxOpening; calls?: OpenSandboxOptions[]; closed?: string[] } = {}): SandboxProbes {
  const closed = overrides.closed ?? [];
  const opened: SandboxOpening = overrides.opened ?? {
    ok: true,
    sandbox: { method: 'bubblewrap', summary: 'bubblewrap: each agent as its own uid', sharedGroup: 7, coversPrivateDirectories: true, runnerFor: () => { throw new Error('not in this test'); }, close: async () => { closed.push('sandbox'); } },
  };
  return {
    platform: 'linux',
    isRoot: true,
    programDirectories: [programsDir(['bwrap', 'setpriv', 'prlimit'])],
    readCgroupSources: () => V2_SOURCES,
    openRunCgroups: () => ({ ok: true, cgroups: fakeRunCgroups(closed) }),
    openSandbox: async (options) => {
      overrides.calls?.push(options);
      return opened;
    },
    mountNamespaceProblem: () => null,
    ...overrides,
  };
}

describe('the Node and git checks', () => {
  it('needs the Node that package.json names in engines', () => {
    const engines = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(`>=${NODE_REQUIRED}`);
    expect(checkNode('20.19.0')).toMatchObject({ status: 'pass' });
    expect(checkNode('22.1.0')).toMatchObject({ status: 'pass' });
    expect(checkNode('20.18.3')).toMatchObject({ status: 'fail', detail: 'Node 20.18.3 is older than the 20.19 colony needs', fix: expect.stringContaining('nvm install 22') });
    expect(checkNode('18.20.4')).toMatchObject({ status: 'fail' });
  });

  it('needs git 2.36, in any of the forms git prints its version', () => {
    expect(checkGit({ ok: true, text: 'git version 2.36.0\n' })).toMatchObject({ status: 'pass' });
    expect(checkGit({ ok: true, text: 'git version 2.39.3 (Apple Git-146)\n' })).toMatchObject({ status: 'pass', detail: expect.stringContaining('git 2.39.3') });
    expect(checkGit({ ok: true, text: 'git version 2.45.1.windows.1\n' })).toMatchObject({ status: 'pass' });
    expect(checkGit({ ok: true, text: 'git version 2.35.8\n' })).toMatchObject({ status: 'fail', detail: expect.stringContaining('older than the 2.36'), fix: expect.stringContaining('apt-get install git') });
    expect(checkGit({ ok: true, text: 'hub version 2.14\n' })).toMatchObject({ status: 'fail', detail: expect.stringContaining('names no version') });
    expect(checkGit({ ok: false, error: 'git is not installed (not found on PATH)' })).toMatchObject({ status: 'fail', detail: 'git cannot be run: git is not installed (not found on PATH)' });
  });
});

describe('the sandbox checks', () => {
  it('pass a machine whose programs, cgroups and test command all work, and leave nothing open', async () => {
    const closed: string[] = [];
    const calls: OpenSandboxOptions[] = [];
    const checks = await checkSandbox('bubblewrap', probes({ closed, calls }), 'doctor-1');
    expect(checks.map((check) => [check.name, check.status])).toEqual([
      ['sandbox programs', 'pass'],
      ['agent uids', 'pass'],
      ['cgroups', 'pass'],
      ['sandbox', 'pass'],
    ]);
    expect(checks[0]?.detail).toMatch(/\/bwrap, .*\/setpriv, .*\/prlimit$/);
    expect(checks[3]?.detail).toBe('a test command ran confined: bubblewrap: each agent as its own uid');
    expect(calls).toMatchObject([{ method: 'bubblewrap', runId: 'doctor-1' }]);
    expect(closed).toEqual(['cgroups', 'sandbox']);
  });

  it('name the missing program and its package, and do not try the sandbox', async () => {
    const calls: OpenSandboxOptions[] = [];
    const checks = await checkSandbox('bubblewrap', probes({ calls, programDirectories: [programsDir(['setpriv', 'prlimit'])] }), 'doctor-1');
    expect(checks[0]).toMatchObject({ name: 'sandbox programs', status: 'fail', detail: expect.stringContaining('bwrap is not installed'), fix: expect.stringContaining('`apt-get install bubblewrap`') });
    expect(checks.map((check) => check.name)).not.toContain('sandbox');
    expect(calls).toEqual([]);
  });

  it('fail a machine without the cgroup controllers, with the fix the run gives', async () => {
    const checks = await checkSandbox('bubblewrap', probes({ readCgroupSources: () => ({ procSelfCgroup: '0::/\n', mountInfo: '22 1 8:1 / / rw - ext4 /dev/sda1 rw' }) }), 'doctor-1');
    expect(checks.find((check) => check.name === 'cgroups')).toEqual({ name: 'cgroups', status: 'fail', detail: expect.stringContaining('no cgroup file system with the memory and pids controllers'), fix: CGROUP_FIX });
    const unreadable = await checkSandbox('bubblewrap', probes({ readCgroupSources: () => { throw new Error("ENOENT: no such file or directory, open '/proc/self/cgroup'"); } }), 'doctor-1');
    expect(unreadable.find((check) => check.name === 'cgroups')).toMatchObject({ status: 'fail', detail: expect.stringContaining('/proc/self/cgroup') });
  });

  it('fail with the problem and fix of a test command that did not run confined', async () => {
    const opened: SandboxOpening = { ok: false, error: 'the sandbox probe command did not behave as confined: it ran as uid 0 gid 0', fix: 'check that bwrap, setpriv and prlimit are the distribution\'s own' };
    const checks = await checkSandbox('bubblewrap', probes({ opened }), 'doctor-1');
    expect(checks.at(-1)).toEqual({ name: 'sandbox', status: 'fail', detail: opened.error, fix: opened.fix });
  });

  it('warn that agents share the uid of a colony that is not root, and fail unshare there', async () => {
    const bubblewrap = await checkSandbox('bubblewrap', probes({ isRoot: false }), 'doctor-1');
    expect(bubblewrap.find((check) => check.name === 'agent uids')).toMatchObject({ status: 'warn', fix: expect.stringContaining('run colony as root') });
    expect(bubblewrap.at(-1)).toMatchObject({ name: 'sandbox', status: 'pass' });
    const calls: OpenSandboxOptions[] = [];
    const unshare = await checkSandbox('unshare', probes({ isRoot: false, calls, programDirectories: [programsDir(['unshare', 'setpriv', 'prlimit', 'mount', 'ip'])] }), 'doctor-1');
    expect(unshare.find((check) => check.name === 'agent uids')).toMatchObject({ status: 'fail', detail: expect.stringContaining('needs root') });
    expect(calls).toEqual([]);
  });

  it('warn, in one line, that --sandbox none confines nothing; fail off Linux', async () => {
    expect(await checkSandbox('none', probes(), 'doctor-1')).toEqual([{ name: 'sandbox', status: 'warn', detail: expect.stringContaining('runs unconfined'), fix: expect.stringContaining('--sandbox') }]);
    expect(await checkSandbox('bubblewrap', probes({ platform: 'darwin' }), 'doctor-1')).toEqual([
      { name: 'sandbox', status: 'fail', detail: 'the bubblewrap sandbox needs Linux; this is darwin', fix: expect.stringContaining('--sandbox none') },
    ]);
  });
});
