import type { CgroupLayout } from './cgroup-layout.js';
import { openCgroupsV1 } from './cgroup-v1.js';
import { markOwner, removeRunCgroupsNow, sweepStaleRuns } from './cgroup-sweep.js';
import { HARNESS_LEAF, openCgroupsV2, v2RunParent } from './cgroup-v2.js';

/** The cgroup limits of one command. */
export interface CgroupLimits {
  readonly memoryBytes: number;
  readonly maxProcesses: number;
}

/**
 * One command's cgroup (on v1, one directory in each of the memory, pids and freezer
 * hierarchies). The launcher joins it by writing its own pid to each of `procsFiles` before
 * it execs the command, so nothing the command starts is ever outside it.
 */
export interface CommandCgroup {
  readonly procsFiles: readonly string[];
  /** The processes in it now. */
  pids(): number[];
  /** Whether the kernel killed a process in it for memory (read from the cgroup, never guessed). */
  outOfMemory(): boolean;
  /** Sends `signal` to every process in it but `except`. */
  signal(signal: NodeJS.Signals, except: readonly number[]): void;
  /** Kills everything in it, frozen first so nothing forks meanwhile; true once it is empty. */
  kill(): Promise<boolean>;
  /** Kills what is left and removes it; why that failed, or null. */
  remove(): Promise<string | null>;
}

/** The cgroups of one run: a parent under the process's own cgroup, one child per command. */
export interface RunCgroups {
  readonly version: 1 | 2;
  /** The run's parent directories: one per hierarchy on v1 (memory, pids, freezer), one on v2. */
  readonly directories: readonly string[];
  /** Where the run's cgroups are, for a log line. */
  readonly description: string;
  create(name: string, limits: CgroupLimits): { ok: true; cgroup: CommandCgroup } | { ok: false; problem: string };
  /** Kills and removes every command cgroup left, then the run's parent. */
  close(): Promise<void>;
}

export type RunCgroupsOpening = { ok: true; cgroups: RunCgroups } | { ok: false; problem: string };

/** `colony-<run>`, with anything but letters, digits, `.`, `_` and `-` replaced. */
export function runCgroupName(runId: string): string {
  return `colony-${runId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}`;
}

/** The directories of the runs this process has open and not closed, removed on process 'exit'. */
const openRuns = new Set<readonly string[]>();

function removeOpenRunsNow(): void {
  for (const directories of openRuns) removeRunCgroupsNow(directories);
}

/**
 * Makes the run's parent cgroup for `layout`; `ownPid` is the harness's pid (v2 may move it to
 * a leaf). First it sweeps the runs under the same parent that a process which has ended left
 * behind (`cgroup-sweep.ts`). The run is marked as this process's, and removed on process
 * 'exit' if `close()` has not run by then (a forced quit calls process.exit).
 */
export function openRunCgroups(layout: CgroupLayout, runId: string, ownPid: number = process.pid): RunCgroupsOpening {
  const name = runCgroupName(runId);
  const parents = layout.version === 1 ? [layout.memory, layout.pids, layout.freezer] : [v2RunParent(layout.own)];
  sweepStaleRuns(parents, name, [HARNESS_LEAF]);
  const opened = layout.version === 1 ? openCgroupsV1(layout, name) : openCgroupsV2(layout, name, ownPid);
  if (!opened.ok) return opened;
  const run = opened.cgroups;
  const marked = markOwner(run.directories);
  if (marked !== null) {
    // Nothing has run in it yet, so it is empty and goes at once.
    removeRunCgroupsNow(run.directories);
    return { ok: false, problem: marked };
  }
  openRuns.add(run.directories);
  if (openRuns.size === 1) process.on('exit', removeOpenRunsNow);
  const close = async (): Promise<void> => {
    if (openRuns.delete(run.directories) && openRuns.size === 0) process.off('exit', removeOpenRunsNow);
    await run.close();
  };
  return { ok: true, cgroups: { ...run, close } };
}
