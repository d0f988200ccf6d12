import type { EventBody } from '../../events/event-types.js';
import { newShortId } from '../../events/ids.js';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import { createMainView, type MainView } from '../../workspace/checkout/main-view.js';
import type { Repository } from '../../workspace/git/repository.js';
import { failureLines, outputTail } from './check-failures.js';
import type { CommandRunners } from '../setup/command-sandbox.js';
import { linkSharedDependencies } from '../setup/shared-dependencies.js';
import { errorMessage } from '../../errors/error-message.js';
import type { DependencyLayers } from '../setup/dependency-layers.js';

/**
 * The agent id the green loop's checks run under: the sandbox gives it a uid of its own, like
 * any agent's, and keeps its spill files under `output/green` in the state directory.
 */
export const GREEN_AGENT_ID = 'green';

/** One run of the project's check command on one commit. */
/**
 * How much of a check's output is kept: far more than an agent's command gets, since failure
 * lines are read from all of it. A test suite's report runs to hundreds of kilobytes, and a
 * failure line lost in the cut middle would read as a pass to a bisect. Past this, the middle
 * is cut and its failure lines are not seen.
 */
export const CHECK_OUTPUT_BYTES = 16 * 2 ** 20;
/** Failure lines kept per check: every failing test of a large red main, within reason for an event. */
export const CHECK_FAILURE_LINES = 200;

export interface SnapshotCheck {
  /** The commit checked, as a full id. */
  readonly commit: string;
  readonly command: string;
  /** Exit code 0, started, and ended before its time ran out. */
  readonly passed: boolean;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** Milliseconds of CPU the check used, where its cgroup counted them. */
  readonly cpuMs?: number;
  /** The last lines of the output; for a timeout, ending with a line that says so. */
  readonly outputTail: string;
  /** The output's failure lines (see `failureLines`), none when it passed; a timeout's only line says it timed out. */
  readonly failures: readonly string[];
}

export interface CheckCommitOptions {
  readonly repo: Repository;
  /** Where the view is made, and removed again; the run's views directory, which its sandbox lets commands write. */
  readonly viewsDir: string;
  readonly commit: string;
  readonly command: string;
  readonly commands: CommandRunners;
  readonly timeoutMs: number;
  /** Aborting kills the check and ends without a result. */
  readonly signal: AbortSignal;
  /** The shared installs of the dependencies: the commit's is linked into the view first; none when absent. */
  readonly dependencyLayers?: DependencyLayers;
  /** Receives what linking the dependencies records (`dependencies.linked` or `.skipped`). */
  readonly record?: (event: EventBody) => void;
}

export type CheckCommitOutcome = { readonly ok: true; readonly check: SnapshotCheck } | { readonly ok: false; readonly error: string };

/**
 * Runs `command` on `commit` in a detached view of its own (made under `viewsDir`, removed
 * again whatever happens), confined like an agent's command under the id `green`. A check
 * that fails, cannot start or times out is a result with `passed` false; `ok` is false only
 * when there is no result: git could not make the view, or `signal` stopped the check.
 */
export async function checkCommit(options: CheckCommitOptions): Promise<CheckCommitOutcome> {
  const { repo, command, signal } = options;
  if (signal.aborted) return { ok: false, error: `the check of ${short(options.commit)} was stopped before it started: ${stopReason(signal)}` };
  const resolveArgs = ['rev-parse', '--verify', '--end-of-options', `${options.commit}^{commit}`];
  const resolved = await runGit(repo.root, resolveArgs);
  if (resolved.code !== 0) return { ok: false, error: `colony could not find the commit ${options.commit} to check: ${describeFailure(resolveArgs, resolved)}` };
  const commit = resolved.stdout.trim();
  let view: MainView;
  try {
    view = await createMainView(repo, { id: newShortId('green'), parentDir: options.viewsDir, at: commit });
  } catch (error) {
    return { ok: false, error: `colony could not check out ${short(commit)} to run the check: ${errorMessage(error)}` };
  }
  try {
    const layer = (await options.dependencyLayers?.forCommit(commit)) ?? null;
    if (layer !== null) await linkSharedDependencies(view.path, layer, options.record ?? (() => undefined));
    const run = options.commands.forAgent(GREEN_AGENT_ID, view.path);
    const result = await run({ command, cwd: view.path, timeoutMs: options.timeoutMs, signal, maxOutputBytes: CHECK_OUTPUT_BYTES });
    if (result.aborted) return { ok: false, error: `the check of ${short(commit)} was stopped before it ended: ${stopReason(signal)}` };
    const output = result.startError === null ? result.output : `colony could not start the check: ${result.startError}`;
    const timeout = `the check timed out after ${formatSeconds(options.timeoutMs)} s and was stopped`;
    const tail = outputTail(output);
    const passed = result.exitCode === 0 && result.startError === null && !result.timedOut;
    return {
      ok: true,
      check: {
        commit,
        command,
        passed,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        durationMs: Math.round(result.durationMs),
        ...(result.cpuMs === null ? {} : { cpuMs: result.cpuMs }),
        outputTail: result.timedOut ? (tail === '' ? timeout : `${tail}\n${timeout}`) : tail,
        // Where a timeout cut the output differs from run to run: the timeout itself is the failure.
        failures: passed ? [] : result.timedOut ? [`the check timed out after ${formatSeconds(options.timeoutMs)} s`] : failuresOf(output, result.exitCode),
      },
    };
  } finally {
    await view.remove();
  }
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function short(commit: string): string {
  return commit.slice(0, 12);
}

function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string') return reason;
  return reason instanceof Error ? reason.message : 'it was stopped';
}

/**
 * A failing check's failure lines; one that printed none still has one, its exit, so it can be
 * told from other failures and traced.
 */
function failuresOf(output: string, exitCode: number | null): string[] {
  const lines = failureLines(output, CHECK_FAILURE_LINES);
  return lines.length > 0 ? lines : [`the check exited with ${exitCode ?? 'a signal'} and printed no failure line`];
}
