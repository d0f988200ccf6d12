import type { Command } from 'commander';
import { formatRunStatus } from '../../observe/status/format-run-status.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { readRunStatus } from './run-report.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, runStateOf, storeOption } from '../state-dir-flags.js';
import { describeRunState } from '../../orchestrator/setup/run-state.js';

interface StatusFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly run?: string;
  readonly json?: boolean;
}

export function defineStatusCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--run <id>', 'the run to report (default: the latest)')
    .option('--json', 'print the status as JSON')
    .action(async (_given: StatusFlags, self: Command) => {
      const configured = applyConfiguration<StatusFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await status(configured.ctx, configured.flags);
    });
}

async function status(ctx: CommandContext, flags: StatusFlags): Promise<number> {
  const state = runStateOf(ctx, flags);
  const found = await readRunStatus(state, flags.run);
  if (found === null) {
    const which = flags.run === undefined ? 'no run' : `no run ${flags.run}`;
    usageError(ctx, `there is ${which} in ${describeRunState(state)}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start one with colony run.');
    return ctx.exitCode;
  }
  ctx.stdout(flags.json === true ? `${JSON.stringify(found, null, 2)}\n` : formatRunStatus(found));
  return EXIT_OK;
}
