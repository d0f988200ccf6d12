import type { Command } from 'commander';
import { formatRunStatus } from '../../observe/status/format-run-status.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { readRunStatus } from './run-report.js';
import { DEFAULT_STATE_DIR_HELP, stateDirOf } from '../state-dir-flags.js';

interface StatusFlags {
  readonly repo: string;
  readonly state?: string;
  readonly run?: string;
  readonly json?: boolean;
}

export function defineStatusCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory (${DEFAULT_STATE_DIR_HELP})`)
    .option('--run <id>', 'the run to report (default: the latest)')
    .option('--json', 'print the status as JSON')
    .action(async (flags: StatusFlags) => {
      ctx.exitCode = await status(ctx, flags);
    });
}

async function status(ctx: CommandContext, flags: StatusFlags): Promise<number> {
  const stateDir = stateDirOf(ctx, flags);
  const found = await readRunStatus(stateDir, flags.run);
  if (found === null) {
    const which = flags.run === undefined ? 'no run' : `no run ${flags.run}`;
    usageError(ctx, `there is ${which} in ${stateDir}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start one with colony run.');
    return ctx.exitCode;
  }
  ctx.stdout(flags.json === true ? `${JSON.stringify(found, null, 2)}\n` : formatRunStatus(found));
  return EXIT_OK;
}
