import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runCleanSession } from '../../orchestrator/session/clean-session.js';
import { EXIT_FAILED, EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { addSteeringOptions, stateDirOf } from '../state-dir-flags.js';
import { describeClean } from './clean-report.js';

interface CleanFlags {
  readonly repo: string;
  readonly state?: string;
  readonly stopped?: boolean;
  readonly damaged?: boolean;
  readonly salvage?: boolean;
  readonly json?: boolean;
}

export function defineCleanCommand(command: Command, ctx: CommandContext): void {
  addSteeringOptions(command)
    .option('--stopped', 'also remove what a stopped run keeps for colony resume (its workspaces, their salvaged work kept); the run is recorded as abandoned')
    .option('--damaged', 'when the state directory\'s colony.db is damaged: unmount its overlays, drop its worktree records, and move it aside to <state>.damaged, kept')
    .option('--salvage', 'also delete the salvaged work of failed workers (refs/colony/salvaged/*), once no run can go on')
    .option('--json', 'print what was cleaned as JSON')
    .action(async (flags: CleanFlags) => {
      ctx.exitCode = await clean(ctx, flags);
    });
}

async function clean(ctx: CommandContext, flags: CleanFlags): Promise<number> {
  if (flags.damaged === true && (flags.stopped === true || flags.salvage === true)) {
    usageError(ctx, '--damaged moves the whole state directory aside and cleans nothing else in it.', 'Run colony clean --damaged alone; pass --salvage in a colony clean after it if the salvage refs should go too.');
    return ctx.exitCode;
  }
  const result = await runCleanSession({
    repoDir: resolve(ctx.cwd, flags.repo),
    stateDir: stateDirOf(ctx, flags),
    stopped: flags.stopped === true,
    damaged: flags.damaged === true,
    salvage: flags.salvage === true,
    ...(ctx.secrets === undefined ? {} : { secrets: ctx.secrets }),
  });
  if (!result.ok) {
    if (result.usage) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    ctx.stderr(`colony: ${result.error}\n`);
    return EXIT_FAILED;
  }
  const { report } = result;
  if (flags.json === true) ctx.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout(`${describeClean(report).join('\n')}\n`);
  return report.problems.length > 0 ? EXIT_FAILED : EXIT_OK;
}
