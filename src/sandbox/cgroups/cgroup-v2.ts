import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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

type V2Layout = Extract<CgroupLayout, { version: 2 }>;

const NEEDED = ['memory', 'pids'] as const;
/** The leaf the harness moves itself into when its own cgroup must hand controllers down. */
export const HARNESS_LEAF = 'colony-harness';
const FREEZE_DEADLINE_MS = 1_000;
const EMPTY_DEADLINE_MS = 5_000;

/**
 * cgroup v2 (Documentation/admin-guide/cgroup-v2.rst): the run's parent is `colony-<run>`
 * under the process's own cgroup, each command a child of it. A cgroup can hand controllers
 * to its children only while it holds no processes itself ("no internal processes"), so when
 * the own cgroup does not already enable memory and pids for its children and the harness is
 * the only process in it, the harness moves itself into the leaf `colony-harness` first, as
 * a delegated service is expected to. Writing a pid into a child's cgroup.procs needs write
 * access to the common ancestor's, which root has and a delegated subtree grants.
 * The leaf is never removed by colony: it holds the harness process itself, and a cgroup with
 * a process in it cannot be removed, so it stays until the harness exits (the next process
 * that needs it reuses it) or is moved out by whoever manages the own cgroup.
 */
export function openCgroupsV2(layout: V2Layout, runName: string, ownPid: number): RunCgroupsOpening {
  const own = v2RunParent(layout.own);
  const available = words(readCgroupFile(join(own, 'cgroup.controllers')));
  const unavailable = NEEDED.filter((controller) => !available.includes(controller));
  if (unavailable.length > 0) {
    return {
      ok: false,
      error: `the cgroup v2 controllers ${unavailable.join(' and ')} are not available in ${own} (cgroup.controllers: "${available.join(' ')}")`,
    };
  }
  const handedDown = handControllersDown(own, ownPid);
  if (handedDown !== null) return { ok: false, error: handedDown };
  const run = join(own, runName);
  const problem = makeCgroupDirectory(run) ?? writeCgroupFile(join(run, 'cgroup.subtree_control'), enable(NEEDED));
  if (problem !== null) {
    removeEmptyCgroupNow(run);
    return { ok: false, error: problem };
  }
  const cgroups: RunCgroups = {
    version: 2,
    directories: [run],
    description: `cgroup v2: ${run}`,
    create: (name, limits) => createCommandCgroup(join(run, name), limits),
    close: async () => {
      for (const child of childCgroups(run)) await removeCommandCgroup(child);
      await removeCgroupDirectory(run);
    },
  };
  return { ok: true, cgroups };
}

/**
 * Where a run's cgroup is made: the own cgroup, or, when the process already sits in a
 * `colony-harness` leaf (it moved there for an earlier sandbox, or its parent did), the leaf's
 * parent, so a second sandbox in one process reuses the leaf instead of nesting a new one in it.
 */
export function v2RunParent(own: string): string {
  return basename(own) === HARNESS_LEAF ? dirname(own) : own;
}

/** Enables memory and pids for the own cgroup's children, moving the harness to a leaf if it must. */
function handControllersDown(own: string, ownPid: number): string | null {
  const subtreeControl = join(own, 'cgroup.subtree_control');
  if (NEEDED.every((controller) => words(readCgroupFile(subtreeControl)).includes(controller))) return null;
  if (writeCgroupFile(subtreeControl, enable(NEEDED)) === null) return null;
  const members = readPids(join(own, 'cgroup.procs'));
  const others = members.filter((pid) => pid !== ownPid);
  if (others.length > 0) {
    return (
      `cannot enable the memory and pids controllers below ${own}: it holds other processes (${others.slice(0, 5).join(', ')}), ` +
      'and a cgroup that holds processes cannot hand controllers to its children'
    );
  }
  const leaf = join(own, HARNESS_LEAF);
  return makeCgroupDirectory(leaf) ?? writeCgroupFile(join(leaf, 'cgroup.procs'), String(ownPid)) ?? writeCgroupFile(subtreeControl, enable(NEEDED));
}

function createCommandCgroup(directory: string, limits: CgroupLimits): { ok: true; cgroup: CommandCgroup } | { ok: false; error: string } {
  const made = makeCgroupDirectory(directory);
  if (made !== null) return { ok: false, error: made };
  const limitProblem =
    writeCgroupFile(join(directory, 'memory.max'), String(limits.memoryBytes)) ??
    // Swap is accounted separately on v2; without this a command could spill past its limit into swap.
    (existsSync(join(directory, 'memory.swap.max')) ? writeCgroupFile(join(directory, 'memory.swap.max'), '0') : null) ??
    writeCgroupFile(join(directory, 'pids.max'), String(limits.maxProcesses));
  if (limitProblem !== null) {
    void removeCommandCgroup(directory);
    return { ok: false, error: limitProblem };
  }
  const pids = (): number[] => readPids(join(directory, 'cgroup.procs'));
  return {
    ok: true,
    cgroup: {
      procsFiles: [join(directory, 'cgroup.procs')],
      pids,
      outOfMemory: () => (readKeyedNumber(join(directory, 'memory.events'), 'oom_kill') ?? 0) > 0,
      // cpu.stat is there whether or not the cpu controller is enabled; usage_usec is user and system.
      cpuMs: () => {
        const microseconds = readKeyedNumber(join(directory, 'cpu.stat'), 'usage_usec');
        return microseconds === null ? null : microseconds / 1_000;
      },
      signal: (signal, except) => signalPids(pids(), signal, except),
      kill: () => killCgroupV2(directory),
      remove: () => removeCommandCgroup(directory),
    },
  };
}

/**
 * Kills every process in a v2 cgroup: `cgroup.kill` where the kernel has it (5.14+), which
 * kills the whole subtree at once and cannot be outrun by forks; before that, freeze through
 * `cgroup.freeze`, SIGKILL each process (a fatal signal reaches a frozen process on v2), thaw.
 * Waits until `cgroup.procs` is empty; true once it is.
 */
export async function killCgroupV2(directory: string): Promise<boolean> {
  const pids = (): number[] => readPids(join(directory, 'cgroup.procs'));
  const killFile = join(directory, 'cgroup.kill');
  const freezeFile = join(directory, 'cgroup.freeze');
  const events = join(directory, 'cgroup.events');
  const start = Date.now();
  while (pids().length > 0) {
    if (Date.now() - start > EMPTY_DEADLINE_MS) return false;
    if (!existsSync(killFile) || writeCgroupFile(killFile, '1') !== null) {
      if (writeCgroupFile(freezeFile, '1') === null) await waitFor(() => readKeyedNumber(events, 'frozen') === 1, FREEZE_DEADLINE_MS);
      signalPids(pids(), 'SIGKILL');
      writeCgroupFile(freezeFile, '0');
    }
    await waitFor(() => pids().length === 0, 200);
  }
  return true;
}

async function removeCommandCgroup(directory: string): Promise<string | null> {
  await killCgroupV2(directory);
  return removeCgroupDirectory(directory);
}

function words(text: string | null): string[] {
  return (text ?? '').split(/\s+/).filter((word) => word !== '');
}

function enable(controllers: readonly string[]): string {
  return controllers.map((controller) => `+${controller}`).join(' ');
}
