/**
 * What one confined command may use. Memory and processes are counted for the command and
 * everything it starts, together (a cgroup); CPU time, file size and open files are limits
 * of each process (rlimits), so a command that starts several processes gets them each.
 */
export interface CommandLimits {
  /** Memory of the whole command, page cache included; the kernel kills inside it past this. */
  readonly memoryBytes: number;
  /** Processes and threads of the whole command at once; a fork past it fails. */
  readonly maxProcesses: number;
  /** CPU seconds per process; SIGXCPU ends the process at this, SIGKILL five seconds later. */
  readonly cpuSeconds: number;
  /** Largest file a process may write; SIGXFSZ ends the process that writes past it. */
  readonly maxFileBytes: number;
  /** Open file descriptors per process. */
  readonly maxOpenFiles: number;
  /** How much of a long output is kept in the spill file; the rest is counted, not written. */
  readonly maxSpillBytes: number;
}

export const DEFAULT_COMMAND_LIMITS: CommandLimits = {
  memoryBytes: 2 * 1024 ** 3,
  maxProcesses: 512,
  cpuSeconds: 600,
  maxFileBytes: 1024 ** 3,
  maxOpenFiles: 1024,
  maxSpillBytes: 50 * 1024 ** 2,
};

/** Extra CPU seconds between SIGXCPU and SIGKILL, for a process that catches SIGXCPU. */
export const CPU_KILL_AFTER_SECONDS = 5;

/** Limits to change from the defaults; a limit absent or undefined keeps its default. */
export type CommandLimitOverrides = { readonly [Name in keyof CommandLimits]?: CommandLimits[Name] | undefined };

/** The defaults with `overrides` applied, or why they cannot be used. */
export function resolveCommandLimits(
  overrides: CommandLimitOverrides = {},
): { ok: true; limits: CommandLimits } | { ok: false; error: string } {
  const given = Object.entries(overrides).filter(([, value]) => value !== undefined);
  const limits: CommandLimits = { ...DEFAULT_COMMAND_LIMITS, ...Object.fromEntries(given) };
  const minimums: Record<keyof CommandLimits, number> = {
    // Below a few megabytes bash itself cannot start.
    memoryBytes: 8 * 1024 ** 2,
    maxProcesses: 8,
    cpuSeconds: 1,
    maxFileBytes: 1,
    maxOpenFiles: 16,
    maxSpillBytes: 0,
  };
  for (const name of Object.keys(minimums) as (keyof CommandLimits)[]) {
    const value = limits[name];
    if (!Number.isSafeInteger(value) || value < minimums[name]) {
      return { ok: false, error: `the command limit ${name} must be a whole number of at least ${minimums[name]}, got ${value}` };
    }
  }
  return { ok: true, limits };
}

/** `1.5 GB`, `512 MB`, `10 KB`: sizes as a person reads them in a status line (1 MB = 1024² bytes). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${bytes} bytes`;
  const rounded = value >= 100 || Number.isInteger(value) ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${rounded} ${units[unit]}`;
}
