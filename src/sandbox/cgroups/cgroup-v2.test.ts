import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPids, removeCgroupDirectory } from './cgroup-files.js';
import { readCgroupSources } from './cgroup-layout.js';
import { HARNESS_LEAF, killCgroupV2, openCgroupsV2 } from './cgroup-v2.js';
import { ownerMarkerName } from './cgroup-sweep.js';
import { openRunCgroups } from './cgroups.js';
import { isProcessAlive } from '../testing/process-runner.conformance.js';

/**
 * cgroup v2 cannot be run for real on a machine whose memory and pids controllers are bound
 * to v1, so the driver is checked here against a fake cgroup root (which files it writes, and
 * what), and its kill and removal against the real v2 hierarchy where one is mounted, which
 * needs no controller.
 */
describe('the cgroup v2 driver against a fake cgroup root', () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const fakeOwnCgroup = (procs: number[]): string => {
    root = mkdtempSync(join(tmpdir(), 'colony-fake-cgroup2-'));
    const own = join(root, 'system.slice', 'colony.service');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    writeFileSync(join(own, 'cgroup.subtree_control'), '');
    writeFileSync(join(own, 'cgroup.procs'), procs.map((pid) => `${pid}\n`).join(''));
    return own;
  };

  it('enables memory and pids below its own cgroup and the run’s, and writes each command’s limits', async () => {
    const own = fakeOwnCgroup([4242]);
    const opened = openCgroupsV2({ version: 2, own }, 'colony-run-1', 4242);
    if (!opened.ok) throw new Error(opened.error);
    expect(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids');
    expect(readFileSync(join(own, 'colony-run-1', 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids');
    expect(opened.cgroups.description).toBe(`cgroup v2: ${join(own, 'colony-run-1')}`);

    const command = join(own, 'colony-run-1', 'agent-1');
    mkdirSync(command);
    writeFileSync(join(command, 'memory.swap.max'), 'max\n');
    const made = opened.cgroups.create('agent-1', { memoryBytes: 128 * 1024 ** 2, maxProcesses: 64 });
    if (!made.ok) throw new Error(made.error);
    expect(readFileSync(join(command, 'memory.max'), 'utf8')).toBe(String(128 * 1024 ** 2));
    expect(readFileSync(join(command, 'memory.swap.max'), 'utf8')).toBe('0');
    expect(readFileSync(join(command, 'pids.max'), 'utf8')).toBe('64');
    expect(made.cgroup.procsFiles).toEqual([join(command, 'cgroup.procs')]);

    writeFileSync(join(command, 'memory.events'), 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\noom_group_kill 0\n');
    expect(made.cgroup.outOfMemory()).toBe(false);
    writeFileSync(join(command, 'memory.events'), 'low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\noom_group_kill 0\n');
    expect(made.cgroup.outOfMemory()).toBe(true);

    expect(made.cgroup.cpuMs()).toBeNull();
    writeFileSync(join(command, 'cpu.stat'), 'usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n');
    expect(made.cgroup.cpuMs()).toBe(1234.567);
  });

  it('leaves controllers already handed down as they are', () => {
    const own = fakeOwnCgroup([4242]);
    writeFileSync(join(own, 'cgroup.subtree_control'), 'cpu memory pids\n');
    expect(openCgroupsV2({ version: 2, own }, 'colony-run-2', 4242).ok).toBe(true);
    expect(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8')).toBe('cpu memory pids\n');
    expect(existsSync(join(own, HARNESS_LEAF))).toBe(false);
  });

  it('names the missing controllers of its own cgroup', () => {
    const own = fakeOwnCgroup([4242]);
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu io\n');
    expect(openCgroupsV2({ version: 2, own }, 'colony-run-3', 4242)).toEqual({
      ok: false,
      error: `the cgroup v2 controllers memory and pids are not available in ${own} (cgroup.controllers: "cpu io")`,
    });
  });

  it('names the other processes that keep its own cgroup from handing controllers down', () => {
    const own = fakeOwnCgroup([4242, 977, 978]);
    // A directory in place of the control file makes the write fail, as the kernel's EBUSY would.
    rmSync(join(own, 'cgroup.subtree_control'));
    mkdirSync(join(own, 'cgroup.subtree_control'));
    const opened = openCgroupsV2({ version: 2, own }, 'colony-run-4', 4242);
    expect(opened.ok ? '' : opened.error).toBe(
      `cannot enable the memory and pids controllers below ${own}: it holds other processes (977, 978), and a cgroup that holds processes cannot hand controllers to its children`,
    );
  });

  it('moves the harness into a leaf once, and a second opening in the same process reuses it', () => {
    const own = fakeOwnCgroup([process.pid]);
    // A directory in place of the control file makes the first write fail, as the kernel's EBUSY would.
    rmSync(join(own, 'cgroup.subtree_control'));
    mkdirSync(join(own, 'cgroup.subtree_control'));
    writeFileSync(join(own, 'cgroup.subtree_control', 'placeholder'), '');
    const first = openCgroupsV2({ version: 2, own }, 'colony-run-5', process.pid);
    expect(first.ok ? '' : first.error).toMatch(/could not write "\+memory \+pids"/);
    expect(readFileSync(join(own, HARNESS_LEAF, 'cgroup.procs'), 'utf8')).toBe(String(process.pid));

    // The process now sits in the leaf, which the kernel shows with the controllers handed down.
    rmSync(join(own, 'cgroup.subtree_control'), { recursive: true });
    writeFileSync(join(own, 'cgroup.subtree_control'), 'memory pids\n');
    const leaf = join(own, HARNESS_LEAF);
    writeFileSync(join(leaf, 'cgroup.controllers'), 'memory pids\n');
    writeFileSync(join(leaf, 'cgroup.subtree_control'), '');
    const second = openCgroupsV2({ version: 2, own: leaf }, 'colony-run-6', process.pid);
    if (!second.ok) throw new Error(second.error);
    expect(second.cgroups.directories).toEqual([join(own, 'colony-run-6')]);
    expect(existsSync(join(leaf, HARNESS_LEAF))).toBe(false);
    expect(existsSync(join(leaf, 'colony-run-6'))).toBe(false);
  });

  it('removes the run’s cgroup again when its controllers cannot be enabled', () => {
    // Deep enough that the run's directory can be made but a file in it is past PATH_MAX, so the write fails.
    const shallow = fakeOwnCgroup([4242]);
    let own = shallow;
    while (join(own, 'colony-run-7').length < 4080) own = join(own, 'd'.repeat(Math.min(200, 4080 - join(own, 'colony-run-7').length)));
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'memory pids\n');
    writeFileSync(join(own, 'cgroup.subtree_control'), 'memory pids\n');
    const opened = openCgroupsV2({ version: 2, own }, 'colony-run-7', 4242);
    expect(opened.ok ? '' : opened.error).toMatch(/ENAMETOOLONG/);
    expect(existsSync(join(own, 'colony-run-7'))).toBe(false);
  });

  it('sweeps a run left by a process that has ended, and keeps those of a live one', () => {
    const own = fakeOwnCgroup([process.pid]);
    writeFileSync(join(own, 'cgroup.subtree_control'), 'memory pids\n');
    const dead = spawnSync('/bin/true').pid ?? 0;
    mkdirSync(join(own, 'colony-stale', 'agent-1'), { recursive: true });
    mkdirSync(join(own, 'colony-stale', `.owner-${dead}-1`));
    mkdirSync(join(own, 'colony-idle', 'agent-1'), { recursive: true });
    mkdirSync(join(own, 'colony-idle', ownerMarkerName() ?? ''));
    mkdirSync(join(own, 'colony-busy', 'agent-1'), { recursive: true });
    mkdirSync(join(own, 'colony-busy', `.owner-${dead}-1`));
    writeFileSync(join(own, 'colony-busy', 'agent-1', 'cgroup.procs'), `${process.pid}\n`);
    mkdirSync(join(own, 'colony-unmarked'));
    const opened = openRunCgroups({ version: 2, own }, 'sweeper');
    if (!opened.ok) throw new Error(opened.error);
    expect(existsSync(join(own, 'colony-stale'))).toBe(false);
    const sweeper = `colony-sweeper-${process.pid}`;
    for (const kept of ['colony-idle', 'colony-busy', 'colony-unmarked', sweeper]) expect(existsSync(join(own, kept))).toBe(true);
    expect(existsSync(join(own, sweeper, ownerMarkerName() ?? ''))).toBe(true);
  });

  it("gives each process of a run its own cgroup, so one closing leaves the others' commands their limits", async () => {
    const own = fakeOwnCgroup([process.pid]);
    writeFileSync(join(own, 'cgroup.subtree_control'), 'memory pids\n');
    // The run's own process and a worker host on the same machine open the same run.
    const runProcess = openRunCgroups({ version: 2, own }, 'run-shared', process.pid);
    const host = openRunCgroups({ version: 2, own }, 'run-shared', process.pid + 1);
    if (!runProcess.ok || !host.ok) throw new Error('expected both openings to succeed');
    expect(runProcess.cgroups.directories).not.toEqual(host.cgroups.directories);
    await host.cgroups.close();
    for (const directory of runProcess.cgroups.directories) expect(existsSync(directory)).toBe(true);
    await runProcess.cgroups.close();
  });
});

const unified = /^\d+ \d+ \S+ \/ (\S+) .* - cgroup2 /m.exec(readCgroupSources().mountInfo)?.[1];
const canUseUnified = process.getuid?.() === 0 && unified !== undefined;

describe.skipIf(!canUseUnified)(`killing and removing a real cgroup v2${canUseUnified ? '' : ' (skipped: needs root and a cgroup2 mount)'}`, () => {
  it('kills every process in it, children included, and removes it', async () => {
    const directory = join(unified ?? '', `colony-test-kill-${process.pid}`);
    mkdirSync(directory);
    try {
      const child = spawn('/bin/sh', ['-c', 'echo $$ > "$1"; sleep 100 & sleep 100 & echo ready; wait', 'sh', join(directory, 'cgroup.procs')], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      await new Promise((resolve) => child.stdout?.once('data', resolve));
      const members = readPids(join(directory, 'cgroup.procs'));
      expect(members.length).toBe(3);
      expect(await killCgroupV2(directory)).toBe(true);
      expect(members.filter((pid) => isProcessAlive(pid))).toEqual([]);
      expect(await removeCgroupDirectory(directory)).toBeNull();
      expect(existsSync(directory)).toBe(false);
    } finally {
      await removeCgroupDirectory(directory);
    }
  });
});
