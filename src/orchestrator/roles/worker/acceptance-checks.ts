import type { EventBody, EventData } from '../../../events/event-types.js';
import type { AcceptanceResult, AcceptanceVerdict, HandoffStatus } from '../../../events/handoff.js';
import { newShortId } from '../../../events/ids.js';
import type { ProcessResult, RunProcess } from '../../../sandbox/process/types.js';
import { createMainView, type MainView } from '../../../workspace/checkout/main-view.js';
import type { Repository } from '../../../workspace/git/repository.js';
import { RUN_STOPPED } from '../../context/run-context.js';
import { linkSharedDependencies } from '../../setup/shared-dependencies.js';
import type { DependencyLayers } from '../../setup/dependency-layers.js';
import { errorMessage } from '../../../errors/error-message.js';
import { failureLines } from '../../green/check-failures.js';
import { splitByRedMain, type RedMain } from '../../green/main-health.js';

/** One acceptance command runs for at most this long by default. */
export const ACCEPTANCE_COMMAND_TIMEOUT_MS = 10 * 60_000;
/**
 * All of a task's commands together run for at most this long: less than the hang watch's grace
 * for a running tool call (35 minutes), so checks that take their time never pass for a hang.
 */
export const ACCEPTANCE_TOTAL_MS = 30 * 60_000;
/** The tail of each command's output kept in `acceptance.checked`. */
const EVENT_OUTPUT_CHARS = 4_000;
/** The tail the handoff carries to the planner: enough for the failing tests, not a whole log. */
const HANDOFF_TAIL_LINES = 25;
const HANDOFF_TAIL_CHARS = 2_000;

/** Why nothing ran when no work of the worker's is on main. */
export const NOTHING_LANDED = 'nothing landed';

export interface AcceptanceCheckRequest {
  readonly repo: Repository;
  readonly taskId: string;
  /** The task's acceptance commands, in order; at least one. */
  readonly commands: readonly string[];
  /** The status the handoff states, recorded with the outcome. */
  readonly claimed: HandoffStatus;
  /** The worker's last landed commit on main, or null when none of its work landed. */
  readonly commit: string | null;
  /** Where the checkout is made (and removed again). */
  readonly viewsDir: string;
  /** Runs a command in `dir`, confined like an agent's. */
  readonly runnerFor: (dir: string) => RunProcess;
  /** The shared installs of the dependencies: the landed commit's is linked into the checkout; none when null or absent. */
  readonly dependencyLayers?: DependencyLayers | null;
  readonly record: (event: EventBody) => void;
  /** Aborting kills the command running and stops the checks without a verdict. */
  readonly signal: AbortSignal;
  readonly commandTimeoutMs?: number;
  readonly totalMs?: number;
  /** main's last green check before the worker's work landed, when it failed: its failures are marked as not the worker's. */
  readonly redBefore?: RedMain | null;
}

export type AcceptanceOutcome =
  | { readonly ok: true; readonly verdict: AcceptanceVerdict }
  /** The signal stopped the checks before they ended: there is no verdict, and nothing was recorded as checked. */
  | { readonly ok: false; readonly error: string };

type CheckedResult = EventData<'acceptance.checked'>['results'][number];

/**
 * Runs a task's acceptance commands on main at `commit`, each in a fresh detached checkout
 * of that commit (made under `viewsDir` and removed after), and records `acceptance.checked`.
 * Main may have moved on since: the checks judge the worker's merge, not whatever landed
 * after it. Without a commit nothing runs and the verdict says nothing landed. Never throws for
 * what git or the commands do: a checkout that cannot be made is a verdict that says so.
 */
export async function runAcceptanceChecks(request: AcceptanceCheckRequest): Promise<AcceptanceOutcome> {
  const { commit, commands } = request;
  if (commit === null) return { ok: true, verdict: recordVerdict(request, null, NOTHING_LANDED, []) };
  let view: MainView;
  try {
    view = await createMainView(request.repo, { id: newShortId('accept'), parentDir: request.viewsDir, at: commit });
  } catch (error) {
    const reason = `colony could not check out ${commit.slice(0, 12)}: ${errorMessage(error)}`;
    return { ok: true, verdict: recordVerdict(request, null, reason, []) };
  }
  try {
    request.record({ type: 'acceptance.started', data: { taskId: request.taskId, commit, commands: [...commands] } });
    const layer = (await request.dependencyLayers?.forCommit(commit)) ?? null;
    if (layer !== null) await linkSharedDependencies(view.path, layer, request.record);
    const run = request.runnerFor(view.path);
    const deadline = performance.now() + (request.totalMs ?? ACCEPTANCE_TOTAL_MS);
    const results: CheckedResult[] = [];
    for (const command of commands) {
      if (request.signal.aborted) return { ok: false, error: stopReason(request.signal) };
      const left = Math.floor(deadline - performance.now());
      if (left <= 0) {
        results.push({ command, exitCode: null, timedOut: true, durationMs: 0, output: 'not run: the checks before it used up the time all of them may take' });
        continue;
      }
      const timeoutMs = Math.min(request.commandTimeoutMs ?? ACCEPTANCE_COMMAND_TIMEOUT_MS, left);
      const result = await run({ command, cwd: view.path, timeoutMs, signal: request.signal });
      if (result.aborted) return { ok: false, error: stopReason(request.signal) };
      results.push(checkedResult(command, result));
    }
    return { ok: true, verdict: recordVerdict(request, commit, null, results) };
  } finally {
    await view.remove();
  }
}

/**
 * A worker's checks as its handoff carries them: the verdict, or RUN_STOPPED when the run
 * stopped before they ended. Then there is no verdict: the task goes back to the store and the
 * resumed worker runs them again before its one handoff. Stopped for another reason (it hung),
 * the verdict says the checks did not end.
 */
export async function checkAcceptance(request: AcceptanceCheckRequest): Promise<AcceptanceVerdict | typeof RUN_STOPPED> {
  const checked = await runAcceptanceChecks(request);
  if (checked.ok) return checked.verdict;
  if (request.signal.reason === RUN_STOPPED) return RUN_STOPPED;
  return { commit: null, passed: false, skipped: `the checks were stopped before they ended: ${checked.error}`, results: [] };
}

function checkedResult(command: string, result: ProcessResult): CheckedResult {
  const output = result.startError === null ? result.output : `colony could not start the command: ${result.startError}`;
  return {
    command,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Math.round(result.durationMs),
    ...(result.cpuMs === null ? {} : { cpuMs: result.cpuMs }),
    output: tailOf(output, EVENT_OUTPUT_CHARS),
  };
}

/** Records the outcome and returns it as the handoff carries it. */
function recordVerdict(request: AcceptanceCheckRequest, commit: string | null, skipped: string | null, results: readonly CheckedResult[]): AcceptanceVerdict {
  const passed = skipped === null && results.every((result) => result.exitCode === 0);
  const owned = results.map((result) => {
    const { already, fresh } = result.exitCode === 0 ? { already: [], fresh: [] } : splitByRedMain(failureLines(result.output), request.redBefore ?? null);
    return { result, ownership: already.length === 0 ? {} : { alreadyFailing: already, newFailures: fresh } };
  });
  request.record({
    type: 'acceptance.checked',
    data: { taskId: request.taskId, claimed: request.claimed, commit, passed, skipped, results: owned.map(({ result, ownership }) => ({ ...result, ...ownership })) },
  });
  return {
    commit,
    passed,
    skipped,
    results: owned.map(
      ({ result, ownership }): AcceptanceResult => ({
        command: result.command,
        passed: result.exitCode === 0,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        outputTail: handoffTail(result.output),
        ...ownership,
      }),
    ),
  };
}

/** The end of `text`, at most `max` characters, starting at a line when one starts in it. */
function tailOf(text: string, max: number): string {
  const trimmed = text.trimEnd();
  if (trimmed.length <= max) return trimmed;
  const cut = trimmed.slice(-max);
  const newline = cut.indexOf('\n');
  return newline === -1 || newline === cut.length - 1 ? cut : cut.slice(newline + 1);
}

function handoffTail(output: string): string {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  return tailOf(lines.slice(-HANDOFF_TAIL_LINES).join('\n'), HANDOFF_TAIL_CHARS);
}

function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return typeof reason === 'string' ? reason : 'the worker was stopped';
}
