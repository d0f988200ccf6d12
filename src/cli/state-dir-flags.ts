import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { redactUrlCredentials } from '../events/secret-redaction.js';
import { runStateAt, type RunState } from '../orchestrator/setup/run-state.js';
import { defaultStateDir, locateDefaultStateDir } from '../orchestrator/setup/state-directory.js';
import { openSteering, type SteeringAccess } from '../orchestrator/session/steering-access.js';
import { usageError, type CommandContext } from './command-context.js';

/** `--repo`, `--state` and `--store`, as the commands that read or steer a run take them. */
export interface StateDirFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
}

/** A commander option parser for a store's address: a PostgreSQL URL. */
export function storeAddress(value: string): string {
  if (!/^postgres(ql)?:\/\/\S+$/i.test(value.trim())) {
    // Whatever it is, its user and password are not repeated.
    throw new InvalidArgumentError(`expected a PostgreSQL URL such as postgres://colony@db.internal:5432/colony (add ?schema=NAME for a schema of its own), got "${redactUrlCredentials(value)}".`);
  }
  return value.trim();
}

/** `--store`, on every command that opens a run's log. */
export function storeOption(): Option {
  return new Option('--store <url>', "the PostgreSQL store the run's log and tasks are in, when not in the state directory (default: the store setting of colony.toml or COLONY_STORE)").argParser(storeAddress);
}

/** Where the flags say a run's state is: the state directory, and the store when one is named. */
export function runStateOf(ctx: Pick<CommandContext, 'cwd'>, flags: StateDirFlags): RunState {
  return runStateAt(stateDirOf(ctx, flags), flags.store);
}

/** How `--state` help texts name the default (`defaultStateDir`). */
export const DEFAULT_STATE_DIR_HELP = "default: colony in the repository's git directory, or <repo>/.colony while an earlier version's runs are there";

/** The state directory the flags name: `--state`, else the repository's own (`defaultStateDir`). */
export function stateDirOf(ctx: Pick<CommandContext, 'cwd'>, flags: StateDirFlags): string {
  return flags.state === undefined ? defaultStateDir(resolve(ctx.cwd, flags.repo)) : resolve(ctx.cwd, flags.state);
}

/** `--repo`, `--state` and `--store` on a command that steers a run, with what they mean there. */
export function addSteeringOptions(command: Command): Command {
  return command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory the run uses (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption());
}

/**
 * Opens the unfinished run of the flags' state directory for one steering command, runs `act`
 * on it and lets it go whatever happens; says what is wrong (exit 2) when there is no run to steer.
 */
export async function steerRun(ctx: CommandContext, flags: StateDirFlags, act: (access: Extract<SteeringAccess, { ok: true }>) => Promise<number>): Promise<number> {
  const access = await openSteering(runStateOf(ctx, flags), ctx.secrets ?? []);
  if (!access.ok) {
    usageError(ctx, access.error);
    return ctx.exitCode;
  }
  try {
    return await act(access);
  } finally {
    await access.close();
  }
}

/**
 * Says once, on stderr, that a session uses the state directory an earlier version left in the
 * checkout (see `locateDefaultStateDir`), what that risks and how to leave it. Only the commands
 * that start a session say it: reading a run is no risk, and saying it on every command is noise.
 */
export function noteStateDirInCheckout(ctx: Pick<CommandContext, 'cwd' | 'stderr'>, flags: StateDirFlags): void {
  if (flags.state !== undefined) return;
  const located = locateDefaultStateDir(resolve(ctx.cwd, flags.repo));
  if (!located.inCheckout) return;
  ctx.stderr(
    `colony: using the state directory an earlier version made in the checkout, ${located.path}, where \`git clean -fdx\` would delete it under a run. ` +
      "Once its runs are finished, remove it (keep .colony/prompts/ if you have prompt overrides there): runs then keep their state in the repository's git directory, out of the checkout's way.\n",
  );
}
