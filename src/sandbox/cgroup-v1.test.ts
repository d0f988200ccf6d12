import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCgroupSources, resolveCgroupLayout } from './cgroup-layout.js';
import type { CgroupLayout } from './cgroup-layout.js';
import { openCgroupsV1 } from './cgroup-v1.js';
import type { RunCgroups } from './cgroups.js';
import { isProcessAlive } from './process-runner-conformance.js';

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
    if (!opened.ok) throw new Error(opened.problem);
    cgroups = opened.cgroups;
    for (const parent of [v1.memory, v1.pids, v1.freezer]) expect(existsSync(join(parent, runName))).toBe(true);
  });

  it('writes the limits, takes in a launched process tree, kills it frozen and removes the cgroup', async () => {
    const made = cgroups?.create('cmd-1', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
    if (made === undefined || !made.ok) throw new Error(made?.ok === false ? made.problem : 'not opened');
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
    for (const parent of [v1.memory, v1.pids, v1.freezer]) expect(existsSync(join(parent, runName, 'cmd-1'))).toBe(false);
  });

  it('removes command cgroups still there, and its own parent, when closed', async () => {
    const made = cgroups?.create('cmd-2', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
    expect(made?.ok).toBe(true);
    await cgroups?.close();
    for (const parent of [v1.memory, v1.pids, v1.freezer]) expect(existsSync(join(parent, runName))).toBe(false);
  });
});
