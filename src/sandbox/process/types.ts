import type { CommandLimits } from './command-limits.js';

/** One command to run: a bash script, where, for how long, with what extra environment. */
export interface ProcessRequest {
  /** Passed to `bash -c`. */
  readonly command: string;
  /** The working directory; must exist. */
  readonly cwd: string;
  /** Wall-clock limit; the whole process group is killed when it passes. */
  readonly timeoutMs: number;
  /** Added to the cleared, allowlisted environment; these values win over it. */
  readonly env?: Readonly<Record<string, string>>;
  /** Output budget, head and tail kept; defaults to 16 KB (`DEFAULT_MAX_OUTPUT_BYTES`). */
  readonly maxOutputBytes?: number;
  /** Aborting kills the command the same way a timeout does. */
  readonly signal?: AbortSignal;
  /** How long a command has between SIGTERM and SIGKILL; defaults to 2 s. */
  readonly killGraceMs?: number;
  /** How long the pipes may keep delivering output after the command exits; defaults to 200 ms. */
  readonly drainMs?: number;
}

/** What happened to a command. Failures to start are data here too, never exceptions. */
export interface ProcessResult {
  /** The exit code, or null when the command was killed by a signal or never started. */
  readonly exitCode: number | null;
  /** The signal that ended the command (`SIGTERM`, `SIGKILL`), or null. */
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** True when the request's AbortSignal ended the command (or stopped it from starting). */
  readonly aborted: boolean;
  /** stdout and stderr interleaved in arrival order, capped, rendered as safe text. */
  readonly output: string;
  /** Bytes the command wrote in total, including those the cap dropped. */
  readonly outputBytes: number;
  readonly truncated: boolean;
  /**
   * Where the whole output is (up to the spill limit) when it was truncated, as the command
   * sees the path, so a later command can `grep` or `sed -n` it; null when nothing was spilled.
   */
  readonly spillPath: string | null;
  /** Bytes in the spill file; less than outputBytes when the spill limit cut it. */
  readonly spillBytes: number;
  /** The memory cgroup recorded an out-of-memory kill while the command ran. */
  readonly outOfMemory: boolean;
  /** The command ended by SIGXCPU: a process reached the CPU time limit. */
  readonly cpuLimitExceeded: boolean;
  /** The command ended by SIGXFSZ: a process wrote past the file size limit. */
  readonly fileTooLarge: boolean;
  /**
   * Milliseconds of CPU the command and everything it started used, counted by its cgroup; null
   * where nothing counts it (the local runner, cgroup v1 without cpuacct).
   */
  readonly cpuMs: number | null;
  /** The limits the command ran under, or null when it ran without any (the local runner). */
  readonly limits: CommandLimits | null;
  readonly durationMs: number;
  /** Why the command could not be started, or null when it ran. */
  readonly startError: string | null;
}

/**
 * Runs one command to completion. Implementations must never reject: every failure, including
 * one to start, comes back in the result. The local runner below is one implementation; a
 * confined one (separate uid, read-only root, cgroup limits) honours the same contract and is
 * held to the same conformance suite.
 */
export type RunProcess = (request: ProcessRequest) => Promise<ProcessResult>;
