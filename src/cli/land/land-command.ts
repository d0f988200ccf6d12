import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runLandSession } from '../../orchestrator/session/land-session.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { addSteeringOptions } from '../state-dir-flags.js';
import { shellWord } from '../../errors/shell-word.js';

interface LandFlags {
  readonly repo: string;
  readonly state?: string;
  readonly json?: boolean;
}

export function defineLandCommand(command: Command, ctx: CommandContext): void {
  addSteeringOptions(command)
    .option('--json', 'print the outcome as JSON')
    .action(async (flags: LandFlags) => {
      ctx.exitCode = await land(ctx, flags);
    });
}

async function land(ctx: CommandContext, flags: LandFlags): Promise<number> {
  const result = await runLandSession({ repoDir: resolve(ctx.cwd, flags.repo), stateDir: flags.state === undefined ? undefined : resolve(ctx.cwd, flags.state) });
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  if (flags.json === true) {
    const { runId, branch, into, how, commit, commits } = result;
    ctx.stdout(`${JSON.stringify({ runId, branch, into, how, commit, commits }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (result.how === 'up-to-date') {
    ctx.stdout(`${result.into} already holds every commit of ${result.branch}: nothing to land.\n`);
    return EXIT_OK;
  }
  const how = result.how === 'fast-forward' ? 'fast-forwarded' : 'merged (a merge commit, since both had moved)';
  ctx.stdout(
    `${result.into} ${how} to ${result.commit.slice(0, 12)}: ${result.commits} commit${result.commits === 1 ? '' : 's'} of run ${result.runId} from ${result.branch}.\n` +
      `The run's branch is kept; delete it when you no longer need it: git branch -d ${shellWord(result.branch)}\n`,
  );
  return EXIT_OK;
}
