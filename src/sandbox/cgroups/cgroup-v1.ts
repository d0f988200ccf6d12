import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  childCgroups,
  makeCgroupDirectory,
  readCgroupFile,
  readKeyedNumber,
  readPids,
  removeCgroupDirectory,
  removeEmptyCgroupNow,
  signalPids,
  waitFor,
  writeCgroupFile,
} from './cgroup-files.js';
import type { CgroupLayout } from './cgroup-layout.js';
import type { CgroupLimits, CommandCgroup, RunCgroups, RunCgroupsOpening } from './types.js';

type V1Layout = Extract<CgroupLayout, { version: 1 }>;
const CONTROLLERS = ['memory', 'pids', 'freezer'] as const;
type Directories = Record<(typeof CONTROLLERS)[number], string> & {
  /** Where CPU time is counted, or null when the cpuacct hierarchy is not there or not writable. */
  readonly cpuacct: string | null;
};

/** How long a freeze may take before the kill goes ahead anyway (a process stuck in the kernel). */
const FREEZE_DEADLINE_MS = 1_000;
const EMPTY_DEADLINE_MS = 5_000;

/**
 * cgroup v1: the run's parent is `colony-<run>` under the process's own cgroup in each of the
 * memory, pids and freezer hierarchies, and each command gets a child in all three. Memory is
 * limited by memory.limit_in_bytes (and memory.memsw.limit_in_bytes, when swap is accounted,
 * so the limit cannot be dodged into swap); processes by pids.max; the freezer stops a fork
 * bomb from forking while it is killed. Where the cpuacct hierarchy is mounted and writable,
 * each command gets a child there too, and its CPU time is read from cpuacct.usage; without
 * it the sandbox runs as well, and commands' CPU time is not counted.
 */
export function openCgroupsV1(layout: V1Layout, runName: string): RunCgroupsOpening {
  const needed = { memory: join(layout.memory, runName), pids: join(layout.pids, runName), freezer: join(layout.freezer, runName) };
  // What was made is removed again before a failure is returned: nothing of a run that never opened stays.
  const fail = (problem: string): RunCgroupsOpening => {
    for (const controller of CONTROLLERS) removeEmptyCgroupNow(needed[controller]);
    return { ok: false, error: problem };
  };
  for (const controller of CONTROLLERS) {
    const problem = makeCgroupDirectory(needed[controller]);
    if (problem !== null) return fail(problem);
  }
  const missing = [
    ['memory.limit_in_bytes', needed.memory],
    ['pids.max', needed.pids],
    ['freezer.state', needed.freezer],
  ].filter(([file, directory]) => !existsSync(join(directory ?? '', file ?? '')));
  if (missing.length > 0) {
    return fail(`the cgroup v1 hierarchies lack ${missing.map(([file]) => file).join(', ')}`);
  }
  const cpuacct = layout.cpuacct === null ? null : join(layout.cpuacct, runName);
  const run: Directories = { ...needed, cpuacct: cpuacct !== null && makeCgroupDirectory(cpuacct) === null ? cpuacct : null };
  const cgroups: RunCgroups = {
    version: 1,
    directories: all(run),
    description: `cgroup v1: ${all(run).join(', ')}`,
    create: (name, limits) => createCommandCgroup(run, name, limits),
    close: async () => {
      const names = new Set(all(run).flatMap((directory) => childCgroups(directory).map((child) => basename(child))));
      for (const name of names) await removeCommandCgroup(commandDirectories(run, name));
      for (const directory of all(run)) await removeCgroupDirectory(directory);
    },
  };
  return { ok: true, cgroups };
}

/** Every hierarchy's directory, cpuacct last when there is one (the order `v1Hierarchies` gives the parents). */
function all(directories: Directories): string[] {
  const { memory, pids, freezer, cpuacct } = directories;
  return cpuacct === null ? [memory, pids, freezer] : [memory, pids, freezer, cpuacct];
}

function commandDirectories(run: Directories, name: string): Directories {
  return {
    memory: join(run.memory, name),
    pids: join(run.pids, name),
    freezer: join(run.freezer, name),
    cpuacct: run.cpuacct === null ? null : join(run.cpuacct, name),
  };
}

function createCommandCgroup(run: Directories, name: string, limits: CgroupLimits): { ok: true; cgroup: CommandCgroup } | { ok: false; error: string } {
  const directories = commandDirectories(run, name);
  const fail = (problem: string) => {
    void removeCommandCgroup(directories);
    return { ok: false as const, error: problem };
  };
  for (const directory of all(directories)) {
    const problem = makeCgroupDirectory(directory);
    if (problem !== null) return fail(problem);
  }
  const memory = String(limits.memoryBytes);
  const limitProblem =
    writeCgroupFile(join(directories.memory, 'memory.limit_in_bytes'), memory) ??
    (existsSync(join(directories.memory, 'memory.memsw.limit_in_bytes'))
      ? writeCgroupFile(join(directories.memory, 'memory.memsw.limit_in_bytes'), memory)
      : null) ??
    writeCgroupFile(join(directories.pids, 'pids.max'), String(limits.maxProcesses));
  if (limitProblem !== null) return fail(limitProblem);
  const pids = (): number[] => [...new Set(all(directories).flatMap((directory) => readPids(join(directory, 'cgroup.procs'))))];
  const cpuacct = directories.cpuacct;
  return {
    ok: true,
    cgroup: {
      procsFiles: all(directories).map((directory) => join(directory, 'cgroup.procs')),
      pids,
      // cpuacct.usage: nanoseconds of CPU, user and system, of every process that was in the cgroup.
      cpuMs: () => (cpuacct === null ? null : nanosecondsToMs(readCgroupFile(join(cpuacct, 'cpuacct.usage')))),
      outOfMemory: () => {
        const kills = readKeyedNumber(join(directories.memory, 'memory.oom_control'), 'oom_kill');
        // Kernels before 4.13 have no oom_kill count; hitting the limit is then the evidence.
        return kills !== null ? kills > 0 : Number((readCgroupFile(join(directories.memory, 'memory.failcnt')) ?? '0').trim()) > 0;
      },
      signal: (signal, except) => signalPids(pids(), signal, except),
      kill: () => killFrozen(directories, pids),
      remove: () => removeCommandCgroup(directories),
    },
  };
}

/**
 * Freeze, SIGKILL every process, thaw, until the cgroup is empty. A frozen process cannot
 * fork, so a fork bomb cannot outrun the kill; the kill is delivered when it thaws.
 */
async function killFrozen(directories: Directories, pids: () => number[]): Promise<boolean> {
  const state = join(directories.freezer, 'freezer.state');
  const start = Date.now();
  while (pids().length > 0) {
    if (Date.now() - start > EMPTY_DEADLINE_MS) return false;
    const frozen = writeCgroupFile(state, 'FROZEN') === null;
    if (frozen) await waitFor(() => (readCgroupFile(state) ?? '').trim() === 'FROZEN', FREEZE_DEADLINE_MS);
    signalPids(pids(), 'SIGKILL');
    writeCgroupFile(state, 'THAWED');
    await waitFor(() => pids().length === 0, 200);
  }
  return true;
}

function nanosecondsToMs(text: string | null): number | null {
  const nanoseconds = Number((text ?? '').trim());
  return text === null || !Number.isFinite(nanoseconds) ? null : Math.round(nanoseconds / 1_000) / 1_000;
}

async function removeCommandCgroup(directories: Directories): Promise<string | null> {
  const pids = (): number[] => all(directories).flatMap((directory) => readPids(join(directory, 'cgroup.procs')));
  await killFrozen(directories, pids);
  const problems: string[] = [];
  for (const directory of all(directories)) {
    const problem = await removeCgroupDirectory(directory);
    if (problem !== null) problems.push(problem);
  }
  return problems.length === 0 ? null : problems.join('; ');
}
