import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCgroupSources, resolveCgroupLayout, v1Hierarchies } from './cgroup-layout.js';
import type { CgroupLayout } from './cgroup-layout.js';
import { openCgroupsV1 } from './cgroup-v1.js';
import { childCgroups, removeEmptyCgroupNow } from './cgroup-files.js';
import { openRunCgroups } from './cgroups.js';
import type { RunCgroups } from './types.js';
import { isProcessAlive } from '../testing/process-runner.conformance.js';

const resolved = resolveCgroupLayout(readCgroupSources());
const layout = resolved.ok && resolved.layout.version === 1 ? resolved.layout : null;
const usable = process.getuid?.() === 0 && layout !== null;

describe.skipIf(!usable)(`the cgroup v1 driver${usable ? '' : ' (skipped: needs root and cgroup v1 memory, pids and freezer)'}`, () => {
  const v1 = layout as Extract<CgroupLayout, { version: 1 }>;
  const runName = `colony-test-v1-${process.pid}`;
  let cgroups: RunCgroups | undefined;
  afterAll(async () => {
    await cgroups?.close();
  });

  it('makes the run’s parent under the process’s own cgroup in each hierarchy', () => {
    const opened = openCgroupsV1(v1, runName);
    if (!opened.ok) throw new Error(opened.error);
    cgroups = opened.cgroups;
    for (const parent of v1Hierarchies(v1)) expect(existsSync(join(parent, runName))).toBe(true);
  });

  it('writes the limits, takes in a launched process tree, kills it frozen and removes the cgroup', async () => {
    const made = cgroups?.create('cmd-1', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
    if (made === undefined || !made.ok) throw new Error(made?.ok === false ? made.error : 'not opened');
    const memory = join(v1.memory, runName, 'cmd-1');
    expect(readFileSync(join(memory, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(64 * 1024 ** 2));
    if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) {
      expect(readFileSync(join(memory, 'memory.memsw.limit_in_bytes'), 'utf8').trim()).toBe(String(64 * 1024 ** 2));
    }
    expect(readFileSync(join(v1.pids, runName, 'cmd-1', 'pids.max'), 'utf8').trim()).toBe('16');

    const join3 = 'for f in "$@"; do echo $$ > "$f"; done; setsid sleep 100 & sleep 100 & echo ready; wait';
    const child = spawn('/bin/sh', ['-c', join3, 'sh', ...made.cgroup.procsFiles], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => child.stdout?.once('data', resolve));
    const members = made.cgroup.pids();
    expect(members.length).toBe(3);
    expect(made.cgroup.outOfMemory()).toBe(false);
    expect(await made.cgroup.kill()).toBe(true);
    expect(members.filter((pid) => isProcessAlive(pid))).toEqual([]);
    expect(readFileSync(join(v1.freezer, runName, 'cmd-1', 'freezer.state'), 'utf8').trim()).toBe('THAWED');
    expect(await made.cgroup.remove()).toBeNull();
    for (const parent of v1Hierarchies(v1)) expect(existsSync(join(parent, runName, 'cmd-1'))).toBe(false);
  });

  it('counts the CPU a command and its children used, where cpuacct is mounted', async () => {
    const made = cgroups?.create('cmd-cpu', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
    if (made === undefined || !made.ok) throw new Error(made?.ok === false ? made.error : 'not opened');
    // Two shells counting, one of them a child: both are charged to the command.
    const busy = 'for f in "$@"; do echo $$ > "$f"; done; count() { i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; }; count & count; wait';
    const child = spawn('/bin/sh', ['-c', busy, 'sh', ...made.cgroup.procsFiles], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    const used = made.cgroup.cpuMs();
    expect(await made.cgroup.remove()).toBeNull();
    if (v1.cpuacct === null) {
      expect(used).toBeNull();
      return;
    }
    // Counting to 150,000 twice in a shell takes a few hundred milliseconds of CPU anywhere.
    expect(used).toBeGreaterThan(100);
    expect(used).toBeLessThan(60_000);
  });

  it('removes command cgroups still there, and its own parent, when closed', async () => {
    const made = cgroups?.create('cmd-2', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
    expect(made?.ok).toBe(true);
    await cgroups?.close();
    for (const parent of v1Hierarchies(v1)) expect(existsSync(join(parent, runName))).toBe(false);
  });
});

describe.skipIf(!usable)(`what the cgroup v1 driver leaves behind${usable ? '' : ' (skipped: needs root and cgroup v1 memory, pids and freezer)'}`, () => {
  const v1 = layout as Extract<CgroupLayout, { version: 1 }>;
  const parents = (): string[] => v1Hierarchies(v1);

  it('removes the run’s directories again when a hierarchy lacks a controller’s files', () => {
    const runName = `colony-test-v1-lacking-${process.pid}`;
    // The pids hierarchy given as the freezer one: its directory has no freezer.state.
    try {
      const opened = openCgroupsV1({ ...v1, freezer: v1.pids }, runName);
      expect(opened).toEqual({ ok: false, error: 'the cgroup v1 hierarchies lack freezer.state' });
      for (const parent of [v1.memory, v1.pids]) expect(existsSync(join(parent, runName))).toBe(false);
    } finally {
      for (const parent of [v1.memory, v1.pids]) removeEmptyCgroupNow(join(parent, runName));
    }
  });

  it('sweeps a run whose owner is gone and which holds no process, and nothing else', async () => {
    const dead = spawnSync('/bin/true').pid ?? 0;
    const make = (name: string, owner: string): string[] => {
      const directories = parents().map((parent) => join(parent, name));
      for (const directory of directories) mkdirSync(join(directory, 'agent-1'), { recursive: true });
      mkdirSync(join(directories[0] ?? '', owner));
      return directories;
    };
    const ownStart = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ')[19];
    const stale = make(`colony-test-stale-${process.pid}`, `.owner-${dead}-1`);
    const busy = make(`colony-test-busy-${process.pid}`, `.owner-${dead}-1`);
    const idle = make(`colony-test-idle-${process.pid}`, `.owner-${process.pid}-${ownStart}`);
    const sleeper = spawn('/bin/sh', ['-c', 'echo $$ > "$1"; echo ready; exec sleep 100', 'sh', join(busy[1] ?? '', 'agent-1', 'cgroup.procs')], { stdio: ['ignore', 'pipe', 'ignore'] });
    let cgroups: RunCgroups | undefined;
    try {
      await new Promise((resolve) => sleeper.stdout?.once('data', resolve));
      const opened = openRunCgroups(v1, `test-sweeper-${process.pid}`);
      if (!opened.ok) throw new Error(opened.error);
      cgroups = opened.cgroups;
      for (const directory of stale) expect(existsSync(directory)).toBe(false);
      for (const directory of [...busy, ...idle]) expect(existsSync(join(directory, 'agent-1'))).toBe(true);
      expect(isProcessAlive(sleeper.pid ?? 0)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.once('exit', resolve));
      await cgroups?.close();
      for (const directory of [...stale, ...busy, ...idle]) {
        for (const child of ['agent-1', `.owner-${dead}-1`, `.owner-${process.pid}-${ownStart}`]) removeEmptyCgroupNow(join(directory, child));
        removeEmptyCgroupNow(directory);
      }
    }
  });

  it('removes the run’s cgroups and kills what is in them when the process quits with process.exit', () => {
    const script = resolve(import.meta.dirname, '..', 'testing', 'exit-with-run-cgroups.ts');
    const output = execFileSync(process.execPath, ['--import', 'tsx', script, `test-exit-${process.pid}`], { encoding: 'utf8' });
    const { directories, pid } = JSON.parse(output) as { directories: string[]; pid: number };
    expect(directories).toHaveLength(v1Hierarchies(v1).length);
    try {
      for (const directory of directories) expect(existsSync(directory)).toBe(false);
      expect(isProcessAlive(pid)).toBe(false);
    } finally {
      if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
      for (const directory of directories) {
        for (const child of childCgroups(directory)) removeEmptyCgroupNow(child);
        removeEmptyCgroupNow(directory);
      }
    }
  });
});
