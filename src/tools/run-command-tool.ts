import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { formatBytes } from '../sandbox/process/command-limits.js';
import { runProcess as runLocalProcess } from '../sandbox/process/process-runner.js';
import type { ProcessResult, RunProcess } from '../sandbox/process/types.js';
import type { Tool, ToolContext, ToolResult } from './tool.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 120;
export const MAX_COMMAND_TIMEOUT_SECONDS = 1_800;

const description = readFileSync(new URL('./descriptions/run-command.md', import.meta.url), 'utf8');

export const runCommandParameters = z.object({
  command: z.string().min(1).describe('The shell command to run with bash, in the workspace root.'),
  timeout_seconds: z
    .number()
    .positive()
    .max(MAX_COMMAND_TIMEOUT_SECONDS)
    .optional()
    .describe(
      `Seconds before the command is killed. Defaults to ${DEFAULT_COMMAND_TIMEOUT_SECONDS}, at most ${MAX_COMMAND_TIMEOUT_SECONDS}.`,
    ),
});
export type RunCommandInput = z.infer<typeof runCommandParameters>;

export interface RunCommandToolOptions {
  /** How commands run; defaults to the local process runner. A confined runner slots in here. */
  readonly runProcess?: RunProcess;
  /** Variables every command gets on top of the cleared environment, e.g. a git identity. */
  readonly environment?: Readonly<Record<string, string>>;
}

/**
 * `run_command`: runs `bash -c` in the workspace. The output starts with a status line saying
 * how the command ended (`exit code: N`, `timed out after Ns: …`, `out of memory: …`, `CPU time
 * limit of N s reached: …`, `file size limit of N reached: …`, `killed by signal SIG`), then,
 * when the output was cut, a line saying how much there was and where all of it is, then a
 * blank line, then stdout and stderr interleaved, capped. A non-zero exit is still ok: it is
 * information for the model; only a command that could not start is an error.
 */
export function createRunCommandTool(workspace: WorkspaceRoot, options: RunCommandToolOptions = {}): Tool<RunCommandInput> {
  const run = options.runProcess ?? runLocalProcess;
  const cwd = resolve(workspace);
  return {
    name: TOOL_NAMES.runCommand,
    description,
    parameters: runCommandParameters,
    execute: async (input: RunCommandInput, context: ToolContext): Promise<ToolResult> => {
      const timeoutSeconds = input.timeout_seconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS;
      const result = await run({
        command: input.command,
        cwd,
        timeoutMs: timeoutSeconds * 1000,
        signal: context.signal,
        ...(options.environment === undefined ? {} : { env: options.environment }),
      });
      if (result.startError !== null) return { ok: false, error: `could not run the command: ${result.startError}` };
      const output = `${statusLines(result, timeoutSeconds)}\n\n${result.output}`;
      return result.cpuMs === null ? { ok: true, output } : { ok: true, output, cpuMs: result.cpuMs };
    },
  };
}

function statusLines(result: ProcessResult, timeoutSeconds: number): string {
  const lines = [ending(result, timeoutSeconds)];
  const killedForMemory = !result.timedOut && result.outOfMemory && result.signal === 'SIGKILL';
  if (result.outOfMemory && !killedForMemory) lines.push(`out of memory: a process of the command was killed at the ${memoryLimit(result)} limit`);
  if (result.truncated) lines.push(truncation(result));
  return lines.join('\n');
}

function ending(result: ProcessResult, timeoutSeconds: number): string {
  if (result.timedOut) return `timed out after ${timeoutSeconds}s: the command was killed`;
  if (result.outOfMemory && result.signal === 'SIGKILL') return `out of memory: the command was killed at the ${memoryLimit(result)} limit`;
  if (result.cpuLimitExceeded) {
    return `CPU time limit${result.limits === null ? '' : ` of ${result.limits.cpuSeconds} s`} reached: the command was killed`;
  }
  if (result.fileTooLarge) {
    return `file size limit${result.limits === null ? '' : ` of ${formatBytes(result.limits.maxFileBytes)}`} reached: the command was killed`;
  }
  if (result.exitCode !== null) return `exit code: ${result.exitCode}`;
  return `killed by signal ${result.signal ?? 'unknown'}`;
}

function memoryLimit(result: ProcessResult): string {
  return result.limits === null ? 'memory' : formatBytes(result.limits.memoryBytes);
}

function truncation(result: ProcessResult): string {
  const total = `output truncated: ${formatBytes(result.outputBytes)} in all`;
  if (result.spillPath === null) return `${total}, only the start and the end are shown`;
  if (result.spillBytes < result.outputBytes) return `${total}, the first ${formatBytes(result.spillBytes)} in ${result.spillPath}`;
  return `${total}, full output in ${result.spillPath}`;
}
