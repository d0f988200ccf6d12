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
  /**
   * Milliseconds of CPU (user and system) every process that was in it has used so far, or
   * null where the kernel does not count it for colony (cgroup v1 without cpuacct).
   */
  cpuMs(): number | null;
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
  create(name: string, limits: CgroupLimits): { ok: true; cgroup: CommandCgroup } | { ok: false; error: string };
  /** Kills and removes every command cgroup left, then the run's parent. */
  close(): Promise<void>;
}

export type RunCgroupsOpening = { ok: true; cgroups: RunCgroups } | { ok: false; error: string };
