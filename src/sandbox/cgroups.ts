import type { CgroupLayout } from './cgroup-layout.js';
import { openCgroupsV1 } from './cgroup-v1.js';
import { openCgroupsV2 } from './cgroup-v2.js';

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

/** Makes the run's parent cgroup for `layout`; `ownPid` is the harness's pid (v2 may move it to a leaf). */
export function openRunCgroups(layout: CgroupLayout, runId: string, ownPid: number = process.pid): RunCgroupsOpening {
  const name = runCgroupName(runId);
  return layout.version === 1 ? openCgroupsV1(layout, name) : openCgroupsV2(layout, name, ownPid);
}
