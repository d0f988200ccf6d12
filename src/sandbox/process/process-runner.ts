import { armDeadline } from './command-deadline.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { buildCommandEnvironment } from './command-environment.js';
import { CommandOutput } from './command-output.js';
import type { SpillDirectory } from './spill-directory.js';
import type { ProcessRequest, ProcessResult, RunProcess } from './types.js';
import { errorMessage } from '../../errors/error-message.js';

/**
 * What of a command's output goes back to the agent, head and tail kept: 16 KB, about 4,000
 * tokens. The rest is spilled to a file the agent can read. Every later call of the agent
 * carries what this lets in, so a test run that prints 40 KB of passing lines would cost its
 * tokens again at every step; the failures and the summary are at its end, which is kept.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_DRAIN_MS = 200;

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
    return notStarted(`could not start bash: ${errorMessage(error)}`, false);
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
  cpuMs: null,
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
    if (child.pid === undefined) finish(`could not start bash: ${errorMessage(error)}`);
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

