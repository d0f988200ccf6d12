import { armDeadline } from './command-deadline.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { buildCommandEnvironment } from './command-environment.js';
import type { CommandLimits } from './command-limits.js';
import { CommandOutput } from './command-output.js';
import type { SpillDirectory } from './spill-directory.js';

export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_DRAIN_MS = 200;

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
  /** Output budget, head and tail kept; defaults to 64 KB. */
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

export interface LocalProcessRunnerOptions {
  /** Where the allowlisted variables (PATH, HOME, LANG…) are read from; defaults to process.env. */
  readonly parentEnvironment?: Readonly<Record<string, string | undefined>>;
  /** A monotonic clock in milliseconds, for durations. */
  readonly now?: () => number;
  /** Where the full output of a truncated command goes; without it nothing is spilled. */
  readonly spill?: SpillDirectory;
}

/**
 * A runner that starts `bash -c` as the leader of its own process group, with stdin closed and
 * a cleared environment, and kills the whole group on timeout, on abort, and after the command
 * exits (so a background child cannot hold the run open).
 */
export function createLocalProcessRunner(options: LocalProcessRunnerOptions = {}): RunProcess {
  const parentEnvironment = options.parentEnvironment ?? process.env;
  const now = options.now ?? (() => performance.now());
  const spill = options.spill ?? null;
  return (request) => runLocalProcess(request, parentEnvironment, now, spill);
}

/** The local runner reading allowlisted variables from process.env. */
export const runProcess: RunProcess = createLocalProcessRunner();

async function runLocalProcess(
  request: ProcessRequest,
  parentEnvironment: Readonly<Record<string, string | undefined>>,
  now: () => number,
  spill: SpillDirectory | null,
): Promise<ProcessResult> {
  const startedAt = now();
  const notStarted = (startError: string, aborted: boolean): ProcessResult => ({
    ...NOT_STARTED,
    aborted,
    durationMs: now() - startedAt,
    startError,
  });
  if (request.signal?.aborted === true) return notStarted('the command was cancelled before it started', true);
  const requestProblem = checkLimits(request);
  if (requestProblem !== null) return notStarted(requestProblem, false);
  const directoryProblem = await checkWorkingDirectory(request.cwd);
  if (directoryProblem !== null) return notStarted(directoryProblem, false);

  const capture = new CommandOutput(request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, spill?.next() ?? null);
  let child: ChildProcess;
  try {
    child = spawn('bash', ['-c', request.command], {
      cwd: request.cwd,
      env: buildCommandEnvironment(parentEnvironment, request.env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    return notStarted(`could not start bash: ${describeError(error)}`, false);
  }
  return new Promise<ProcessResult>((resolve) => {
    watchChild(child, request, capture, (outcome) => {
      resolve({
        ...NOT_STARTED,
        ...outcome,
        ...capture.finish(),
        durationMs: now() - startedAt,
      });
    });
  });
}

/** A result with nothing run: what a runner starts from before it fills in what happened. */
export const NOT_STARTED: ProcessResult = {
  exitCode: null,
  signal: null,
  timedOut: false,
  aborted: false,
  output: '',
  outputBytes: 0,
  truncated: false,
  spillPath: null,
  spillBytes: 0,
  outOfMemory: false,
  cpuLimitExceeded: false,
  fileTooLarge: false,
  limits: null,
  durationMs: 0,
  startError: null,
};

type ChildOutcome = Pick<ProcessResult, 'exitCode' | 'signal' | 'timedOut' | 'aborted' | 'startError'>;

function watchChild(
  child: ChildProcess,
  request: ProcessRequest,
  capture: CommandOutput,
  done: (outcome: ChildOutcome) => void,
): void {
  const killGraceMs = request.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const drainMs = request.drainMs ?? DEFAULT_DRAIN_MS;
  let exited = false;
  let exit: { code: number | null; signal: string | null } | null = null;
  let finished = false;
  let killTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;

  const killGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      // A negative pid addresses the whole process group the detached bash leads.
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is already gone, which is what we wanted.
    }
  };
  const stop = (): void => {
    if (exited || killTimer !== undefined) return;
    killGroup('SIGTERM');
    killTimer = setTimeout(() => killGroup('SIGKILL'), killGraceMs);
  };
  const deadline = armDeadline(request, stop);

  const finish = (startError: string | null): void => {
    if (finished) return;
    finished = true;
    deadline.dispose();
    clearTimeout(killTimer);
    clearTimeout(drainTimer);
    child.stdout?.destroy();
    child.stderr?.destroy();
    done({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut: deadline.timedOut, aborted: deadline.aborted, startError });
  };

  child.stdout?.on('data', (chunk: Buffer) => capture.append(chunk));
  child.stderr?.on('data', (chunk: Buffer) => capture.append(chunk));
  child.on('error', (error) => {
    // After a successful spawn, errors here come from signalling and change nothing.
    if (child.pid === undefined) finish(`could not start bash: ${describeError(error)}`);
  });
  child.on('exit', (code, signal) => {
    exited = true;
    exit = { code, signal };
    deadline.settle();
    clearTimeout(killTimer);
    // Leftover members of the group (background jobs) die with the command they belong to.
    killGroup('SIGKILL');
    drainTimer = setTimeout(() => finish(null), drainMs);
  });
  // 'close' follows 'exit' once every holder of the pipes is gone and all output is read.
  child.on('close', () => {
    if (exited) finish(null);
  });
}

/** Why the request's own limits cannot be used, or null. */
export function checkLimits(request: ProcessRequest): string | null {
  if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
    return `timeoutMs must be a positive number of milliseconds, got ${request.timeoutMs}`;
  }
  const maxOutputBytes = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 2) {
    return `maxOutputBytes must be an integer of at least 2, got ${maxOutputBytes}`;
  }
  return null;
}

/** Why `cwd` cannot be a command's working directory, or null. */
export async function checkWorkingDirectory(cwd: string): Promise<string | null> {
  try {
    const info = await stat(cwd);
    return info.isDirectory() ? null : `the working directory is not a directory: ${cwd}`;
  } catch {
    return `the working directory does not exist: ${cwd}`;
  }
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
