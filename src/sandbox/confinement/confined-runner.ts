import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import type { RunCgroups } from '../cgroups/types.js';
import type { CommandLimits } from '../process/command-limits.js';
import { CommandOutput } from '../process/command-output.js';
import { watchConfinedChild } from './confined-watch.js';
import type { ConfinedOutcome } from './confined-watch.js';
import { DEFAULT_MAX_OUTPUT_BYTES, NOT_STARTED, checkLimits, checkWorkingDirectory } from '../process/process-runner.js';
import { errorMessage } from '../../errors/error-message.js';
import type { ProcessRequest, ProcessResult, RunProcess } from '../process/types.js';
import type { SpillDirectory } from '../process/spill-directory.js';

/** How a confined command is started once its launcher has joined the command's cgroup. */
export interface ConfinedLaunch {
  /** The program and its arguments, exec'd by the launcher (prlimit, then the confinement). */
  readonly argv: readonly string[];
  /** The environment the launcher starts with; the confinement passes it on to the command. */
  readonly env: Readonly<Record<string, string>>;
}

export interface ConfinedRunnerOptions {
  readonly cgroups: RunCgroups;
  readonly limits: CommandLimits;
  /** A cgroup name unique in the run for each command. */
  readonly nextCgroupName: () => string;
  /** The only directory the command may write (besides its private /tmp); `cwd` must be in it. */
  readonly workspace: string;
  readonly spill: SpillDirectory | null;
  /** Builds the command line for one request; the command must write `started` to fd 3 once confined. */
  readonly launch: (request: ProcessRequest) => ConfinedLaunch;
  readonly now?: () => number;
}

/**
 * The launcher: a root shell that joins the command's cgroups by writing its own pid to each
 * `cgroup.procs` given, then execs the rest of its arguments. Everything the command starts
 * is born inside the cgroups, so no fork can race the join.
 */
const LAUNCHER = [
  'count=$1; shift',
  'while [ "$count" -gt 0 ]; do',
  '  echo $$ > "$1" || { echo "colony: could not join the cgroup $1" >&2; exit 125; }',
  '  shift; count=$((count - 1))',
  'done',
  'exec "$@"',
].join('\n');

/**
 * A RunProcess that runs every command in its own cgroup through `launch`'s confinement, and
 * honours the local runner's contract: never rejects, stdin closed, head and tail kept,
 * SIGTERM then SIGKILL on timeout or abort, and nothing left running once it returns.
 */
export function createConfinedRunner(options: ConfinedRunnerOptions): RunProcess {
  const now = options.now ?? (() => performance.now());
  const workspace = resolve(options.workspace);
  return async (request) => {
    const startedAt = now();
    const notStarted = (startError: string, aborted: boolean): ProcessResult => ({
      ...NOT_STARTED,
      limits: options.limits,
      aborted,
      durationMs: now() - startedAt,
      startError,
    });
    if (request.signal?.aborted === true) return notStarted('the command was cancelled before it started', true);
    const problem = checkLimits(request) ?? (await checkWorkingDirectory(request.cwd)) ?? checkInside(workspace, request.cwd);
    if (problem !== null) return notStarted(problem, false);
    const made = options.cgroups.create(options.nextCgroupName(), options.limits);
    if (!made.ok) return notStarted(`could not make the command's cgroup: ${made.error}`, false);
    const cgroup = made.cgroup;
    const output = new CommandOutput(request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES, options.spill?.next() ?? null);
    let child: ChildProcess;
    try {
      const launch = options.launch(request);
      child = spawn('/bin/sh', ['-c', LAUNCHER, 'colony-launcher', String(cgroup.procsFiles.length), ...cgroup.procsFiles, ...launch.argv], {
        cwd: '/',
        env: launch.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      await cgroup.remove();
      return notStarted(`could not start the sandbox: ${errorMessage(error)}`, false);
    }
    const outcome = await watchConfinedChild(child, request, cgroup, output);
    const collected = output.finish();
    const startError = startProblem(outcome, collected.output);
    if (startError !== null) return notStarted(startError, false);
    return { ...NOT_STARTED, ...describeEnding(outcome), ...collected, cpuMs: outcome.cpuMs, limits: options.limits, durationMs: now() - startedAt };
  };
}

function checkInside(workspace: string, cwd: string): string | null {
  const path = relative(workspace, resolve(cwd));
  if (path === '' || (!path.startsWith('..') && !isAbsolute(path))) return null;
  return `the working directory ${cwd} is outside the workspace ${workspace}`;
}

/**
 * The confinement reports a command killed by signal N as exit status 128 + N, as bash does,
 * so the status alone cannot tell `exit 143` from SIGTERM. A status is read as a signal only
 * where there is evidence of one: the runner sent it (timeout, abort), the kernel sends it for
 * a limit (SIGXCPU, SIGXFSZ), or the cgroup recorded an out-of-memory kill (SIGKILL).
 */
function describeEnding(outcome: ConfinedOutcome): Pick<
  ProcessResult,
  'exitCode' | 'signal' | 'timedOut' | 'aborted' | 'outOfMemory' | 'cpuLimitExceeded' | 'fileTooLarge'
> {
  const base = { timedOut: outcome.timedOut, aborted: outcome.aborted, outOfMemory: outcome.outOfMemory };
  let signal = outcome.signal;
  let exitCode = outcome.code;
  if (signal === null && exitCode !== null && exitCode > 128) {
    const name = signalName(exitCode - 128);
    const evidence =
      name !== null &&
      (outcome.sentSignals.includes(name) || name === 'SIGXCPU' || name === 'SIGXFSZ' || (name === 'SIGKILL' && outcome.outOfMemory));
    if (evidence) {
      signal = name;
      exitCode = null;
    }
  }
  return { ...base, exitCode, signal, cpuLimitExceeded: signal === 'SIGXCPU', fileTooLarge: signal === 'SIGXFSZ' };
}

function signalName(number: number): NodeJS.Signals | null {
  const entry = Object.entries(constants.signals).find(([, value]) => value === number);
  return entry === undefined ? null : (entry[0] as NodeJS.Signals);
}

/** A launch that ended before the command was confined, not by the runner's hand, is a start error. */
function startProblem(outcome: ConfinedOutcome, output: string): string | null {
  if (outcome.startError !== null) return outcome.startError;
  if (outcome.started || outcome.timedOut || outcome.aborted) return null;
  const said = output.trim().split('\n').slice(-5).join('\n');
  return `the sandbox could not start the command${said === '' ? ` (exit status ${outcome.code ?? outcome.signal})` : `: ${said}`}`;
}
