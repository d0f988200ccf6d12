import { InvalidArgumentError } from 'commander';

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

/** A command line for colony to run (`--merge-check`): anything but blank. */
export function commandText(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a command to run, got an empty one.');
  return value;
}
