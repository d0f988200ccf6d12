import { InvalidArgumentError, Option } from 'commander';
import type { Terminal } from './terminal-ui.js';
import { WORKSPACE_METHOD_CHOICES } from '../workspace/workspace-method-choice.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** What a command needs from the process, passed in so commands run the same in tests. */
export interface CommandContext {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Ends long-running commands (`events --follow`, `sim-server`) when aborted. */
  readonly signal: AbortSignal;
  /**
   * The API keys and other credentials in `env` (see `secretsInEnvironment`), which a command
   * must keep out of everything it records; `stdout` and `stderr` already redact them.
   */
  readonly secrets?: readonly string[];
  /**
   * The terminal colony was started in, when both its input and output are one: the terminal
   * UI draws there. Absent when either is a pipe or a file, and in tests.
   */
  readonly terminal?: Terminal;
  /**
   * False with `--no-color` or a non-empty `NO_COLOR` (https://no-color.org): the terminal UI,
   * the only output colony colours, draws without colours. Absent means true.
   */
  readonly color?: boolean;
  /** Set by the command that ran. */
  exitCode: number;
}

/** Reports bad usage: what was wrong and what to type instead. */
export function usageError(ctx: CommandContext, problem: string, hint?: string): void {
  ctx.stderr(`colony: ${problem}\n`);
  if (hint !== undefined) ctx.stderr(`${hint}\n`);
  ctx.exitCode = EXIT_USAGE;
}

/** A commander option parser for a positive whole number. */
export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}".`);
  return parsed;
}

/** A commander option parser for a positive number, fractions allowed; `what` says what is expected, e.g. "a number of hours such as 0.5". */
export function positiveNumber(what: string): (value: string) => number {
  return (value) => {
    const parsed = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError(`expected ${what}, more than 0, got "${value}".`);
    return parsed;
  };
}

/** A command line for colony to run (`--merge-check`): anything but blank. */
export function commandText(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a command to run, got an empty one.');
  return value;
}

const BYTE_UNITS: Readonly<Record<string, number>> = { '': 1, B: 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/** A commander option parser for a size on disk: bytes, or a number with K, M, G or T (powers of 1024), like `2G` or `500M`. */
export function byteSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(value.trim());
  const unit = BYTE_UNITS[(match?.[2] ?? '').toUpperCase()];
  const bytes = match === null || unit === undefined ? Number.NaN : Math.floor(Number(match[1]) * unit);
  if (!Number.isFinite(bytes) || bytes <= 0) throw new InvalidArgumentError(`expected a size such as 500M or 2G, got "${value}".`);
  return bytes;
}

/** `--workspaces <method>`, shared by the commands that make workspaces. */
export function workspacesOption(): Option {
  return new Option('--workspaces <method>', 'how workspaces are made: overlay mounts on a shared checkout (Linux, root), a git worktree each, or auto (overlay where it works)')
    .choices([...WORKSPACE_METHOD_CHOICES])
    .default('auto');
}
