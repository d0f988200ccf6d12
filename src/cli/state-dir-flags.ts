import { resolve } from 'node:path';
import type { Command } from 'commander';
import { defaultStateDir } from '../orchestrator/setup/state-directory.js';
import { openSteering, type SteeringAccess } from '../orchestrator/session/steering-access.js';
import { usageError, type CommandContext } from './command-context.js';

/** `--repo` and `--state`, as the commands that read or steer a run take them. */
export interface StateDirFlags {
  readonly repo: string;
  readonly state?: string;
}

/** The state directory the flags name: `--state`, else the repository's own (`<repo>/.colony`). */
export function stateDirOf(ctx: Pick<CommandContext, 'cwd'>, flags: StateDirFlags): string {
  return flags.state === undefined ? defaultStateDir(resolve(ctx.cwd, flags.repo)) : resolve(ctx.cwd, flags.state);
}

/** `--repo` and `--state` on a command that steers a run, with what they mean there. */
export function addSteeringOptions(command: Command): Command {
  return command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', 'the state directory the run uses (default: <repo>/.colony)');
}

/**
 * Opens the unfinished run of the flags' state directory for one steering command, runs `act`
 * on it and lets it go whatever happens; says what is wrong (exit 2) when there is no run to steer.
 */
export function steerRun(ctx: CommandContext, flags: StateDirFlags, act: (access: Extract<SteeringAccess, { ok: true }>) => number): number {
  const access = openSteering(stateDirOf(ctx, flags), ctx.secrets ?? []);
  if (!access.ok) {
    usageError(ctx, access.error);
    return ctx.exitCode;
  }
  try {
    return act(access);
  } finally {
    access.close();
  }
}
