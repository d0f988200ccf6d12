import type { RunProcess } from '../../../sandbox/process/types.js';
import type { MergeCheck } from '../../../workspace/merge/merge-to-main.js';

/** A merge check runs for at most this long; a check that hangs fails the merge, not the run. */
const MERGE_CHECK_TIMEOUT_MS = 10 * 60_000;
const OUTPUT_TAIL_LINES = 40;

/**
 * The `--merge-check` command as a merge check: run in the worker's workspace on its work
 * replayed onto main. It passes on exit code 0; otherwise the agent is shown the end of the
 * output, and a timeout says so. It runs through `runProcess`, confined like the worker's own commands.
 */
export function commandMergeCheck(command: string, runProcess: RunProcess, signal?: AbortSignal): MergeCheck {
  return async (workspacePath) => {
    const result = await runProcess({ command, cwd: workspacePath, timeoutMs: MERGE_CHECK_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) });
    if (result.exitCode === 0 && result.startError === null && !result.timedOut) return { ok: true };
    const tail = (result.startError ?? result.output).split('\n').filter((line) => line.trim() !== '').slice(-OUTPUT_TAIL_LINES).join('\n');
    const how = result.timedOut
      ? `timed out after ${MERGE_CHECK_TIMEOUT_MS / 60_000} minutes`
      : result.startError !== null
        ? 'could not start'
        : `exited with ${result.exitCode ?? 'a signal'}`;
    return { ok: false, error: `\`${command}\` ${how}:\n${tail}` };
  };
}
