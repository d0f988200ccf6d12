import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CGROUP_FIX, USER_NAMESPACE_FIX, probeMountNamespace } from './sandbox-probe.js';
import { defaultProgramDirectories, findProgram } from './sandbox-programs.js';
import { confinedTestsUnavailable, runCgroupsLeft } from './testing/confined-test-support.js';
import { openSandbox } from './sandbox.js';
import { DEFAULT_COMMAND_LIMITS } from './process/command-limits.js';

describe('opening a sandbox', () => {
  let directory = '';
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'colony-open-sandbox-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('runs commands unconfined with none, and says so', async () => {
    const opening = await openSandbox({ method: 'none', runId: 'none-test', limits: { maxSpillBytes: 1_000 } });
    if (!opening.ok) throw new Error(opening.error);
    expect(opening.sandbox.method).toBe('none');
    expect(opening.sandbox.summary).toMatch(/^commands are NOT confined/);
    const workspace = join(directory, 'workspace');
    mkdirSync(workspace);
    const run = opening.sandbox.runnerFor({
      agentId: 'a',
      workspace,
      hidden: [],
      spillDir: join(directory, 'spill'),
      shareNetwork: false,
      extras: { binds: [], prelude: 'exit 9', environment: { GREETING: 'hello', OVERRIDDEN: 'extras' } },
    });
    const result = await run({ command: 'echo "$GREETING $OVERRIDDEN"; seq 1 1000', cwd: workspace, timeoutMs: 5_000, maxOutputBytes: 100, env: { OVERRIDDEN: 'request' } });
    expect(result.exitCode).toBe(0);
    expect(result.output.startsWith('hello request\n1\n')).toBe(true);
    expect(result.limits).toBeNull();
    expect(result.spillPath).toBe(join(directory, 'spill', 'cmd-1.log'));
    expect(readFileSync(result.spillPath ?? '', 'utf8').length).toBe(1_000);
    await opening.sandbox.close();
  });

  it('refuses limits below what a command needs', async () => {
    expect(await openSandbox({ method: 'none', runId: 'limits', limits: { memoryBytes: 1024 } })).toEqual({
      ok: false,
      error: `the command limit memoryBytes must be a whole number of at least ${8 * 1024 ** 2}, got 1024`,
      fix: 'pass limits that are whole numbers at or above the minimum named',
    });
  });

  it('names the packages to install when the programs are missing', async () => {
    const opening = await openSandbox({ method: 'bubblewrap', runId: 'missing', programDirectories: [directory] });
    expect(opening).toEqual({
      ok: false,
      error: 'bwrap, setpriv, prlimit are not installed',
      fix: 'install bubblewrap and util-linux: `apt-get install bubblewrap util-linux` on Debian and Ubuntu, `dnf install bubblewrap util-linux` on Fedora',
    });
  });

  // openSandbox looks for its programs before the cgroups: this needs bubblewrap installed.
  it.skipIf(process.getuid?.() !== 0 || confinedTestsUnavailable('bubblewrap') !== null)('fails closed, naming the need, when no cgroup hierarchy with the controllers is there', async () => {
    const opening = await openSandbox({ method: 'bubblewrap', runId: 'no-cgroups', cgroupSources: { procSelfCgroup: '0::/\n', mountInfo: '' } });
    expect(opening).toEqual({ ok: false, error: expect.stringMatching(/no cgroup file system with the memory and pids controllers/), fix: CGROUP_FIX });
    expect(CGROUP_FIX).toMatch(/run colony as root.*delegated cgroup v2 subtree/);
  });

  it.skipIf(process.getuid?.() !== 0)('fails closed when the cgroup v2 it is in cannot give it memory and pids', async () => {
    const own = join(directory, 'cgroup2', 'user.slice');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu io\n');
    const mountInfo = `35 24 0:30 / ${join(directory, 'cgroup2')} rw - cgroup2 cgroup2 rw`;
    const opening = await openSandbox({ method: 'unshare', runId: 'v2', cgroupSources: { procSelfCgroup: '0::/user.slice\n', mountInfo } });
    expect(opening).toEqual({ ok: false, error: `the cgroup v2 controllers memory and pids are not available in ${own} (cgroup.controllers: "cpu io")`, fix: CGROUP_FIX });
  });

  /**
   * Stand-ins for one program of the chain make the probe meet what a misconfigured machine
   * would show it; the other programs are the real ones.
   */
  const withStandIn = (name: string, script: string): string[] => {
    const bin = join(directory, 'bin');
    mkdirSync(bin);
    for (const real of ['bwrap', 'setpriv', 'prlimit']) {
      if (real !== name) symlinkSync(findProgram(real, defaultProgramDirectories()) ?? '', join(bin, real));
    }
    writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
    chmodSync(directory, 0o755);
    chmodSync(bin, 0o755);
    chmodSync(join(bin, name), 0o755);
    return [bin];
  };
  const confined = confinedTestsUnavailable('bubblewrap') === null;

  it.skipIf(!confined)('fails closed with the user-namespace fix when bubblewrap cannot make its namespaces', async () => {
    const programDirectories = withStandIn('bwrap', 'echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1');
    const opening = await openSandbox({ method: 'bubblewrap', runId: `no-userns-${process.pid}`, programDirectories });
    expect(opening).toEqual({ ok: false, error: expect.stringMatching(/^the sandbox probe could not run a command: .*No permissions to creating new namespace/), fix: USER_NAMESPACE_FIX });
    expect(USER_NAMESPACE_FIX).toMatch(/user\.max_user_namespaces.*kernel\.unprivileged_userns_clone=1.*kernel\.apparmor_restrict_unprivileged_userns=0/);
    expect(runCgroupsLeft('no-userns')).toEqual([]);
  });

  it.skipIf(!confined)('fails closed when the command does not run as the agent’s uid', async () => {
    const setpriv = findProgram('setpriv', defaultProgramDirectories());
    const programDirectories = withStandIn('setpriv', `while [ "$1" != "--" ]; do shift; done; shift; exec ${setpriv} --reuid 2000000999 --regid 2000000000 --clear-groups -- "$@"`);
    const opening = await openSandbox({ method: 'bubblewrap', runId: `no-uid-${process.pid}`, programDirectories });
    expect(opening).toMatchObject({ ok: false, error: expect.stringMatching(/did not behave as confined: it ran as uid 2000000999 gid 2000000000, not 2000000001 and 2000000000/) });
  });

  it('says why root could not cover private directories: programs missing, or no mount namespace to be had', () => {
    expect(probeMountNamespace({ unshare: '', mount: '' })).toBe('unshare and mount are not installed');
    const refusing = join(directory, 'refusing-unshare');
    writeFileSync(refusing, '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n');
    chmodSync(refusing, 0o755);
    expect(probeMountNamespace({ unshare: refusing, mount: '/bin/mount' })).toBe('a mount namespace could not be made: unshare: unshare failed: Operation not permitted');
  });

  it.skipIf(process.getuid?.() !== 0)('finds that root can make a mount namespace with a tmpfs in it here', () => {
    expect(probeMountNamespace({ unshare: findProgram('unshare', defaultProgramDirectories()) ?? '', mount: findProgram('mount', defaultProgramDirectories()) ?? '' })).toBeNull();
  });

  it('has the documented defaults', () => {
    expect(DEFAULT_COMMAND_LIMITS).toEqual({
      memoryBytes: 2 * 1024 ** 3,
      maxProcesses: 512,
      cpuSeconds: 600,
      maxFileBytes: 1024 ** 3,
      maxOpenFiles: 1024,
      maxSpillBytes: 50 * 1024 ** 2,
    });
  });
});
