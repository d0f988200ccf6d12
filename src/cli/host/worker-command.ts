import { hostname, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { runWorkerHost } from '../../orchestrator/session/worker-host.js';
import { trunkOriginOf, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';
import { describeRunState, runStateAt } from '../../orchestrator/setup/run-state.js';
import { EXIT_OK, positiveInteger, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { storeOption } from '../state-dir-flags.js';
import { progressPrinter } from '../commands/run.js';
import { resolveRecordedModel } from '../commands/resume.js';

interface WorkerFlags {
  /** Never given: the configuration is read where the host is started. */
  readonly repo?: string;
  readonly store?: string;
  readonly origin?: string;
  readonly workers: number;
  readonly state?: string;
  readonly name?: string;
  readonly quiet?: boolean;
  readonly verbose?: boolean;
}

/** Where a host keeps its state when not told: the user's state directory, not any checkout. */
function defaultHostStateDir(env: CommandContext['env']): string {
  const base = env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(env.HOME ?? homedir(), '.local', 'state');
  return join(base, 'colony', 'worker');
}

export function defineWorkerCommand(command: Command, ctx: CommandContext): void {
  command
    .addOption(storeOption())
    .option('--origin <url>', "the git repository the run lands on, as this host reaches it (default: the one the run recorded; give it here with the password if it needs one)")
    .option('--workers <n>', 'the most workers this host runs at once', positiveInteger, 4)
    .option('--state <dir>', "this host's own state: its copy of the origin, its workspaces, its shared dependencies (default: $XDG_STATE_HOME/colony/worker, or ~/.local/state/colony/worker)")
    .option('--name <host>', "this host's name in the run's events and leases (default: the machine's host name)")
    .option('--quiet', 'print only what the host does, not its agents’ milestones')
    .option('--verbose', 'print a line for every event of this host, not only the milestones')
    .action(async (_given: WorkerFlags, self: Command) => {
      const configured = applyConfiguration<WorkerFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await worker(configured.ctx, configured.flags);
    });
}

async function worker(ctx: CommandContext, flags: WorkerFlags): Promise<number> {
  if (flags.store === undefined) {
    usageError(ctx, 'colony worker works on the runs of a shared store: give it with --store postgres://… (or the store setting of colony.toml, or COLONY_STORE).');
    return ctx.exitCode;
  }
  let origin: TrunkOrigin | undefined;
  const secrets = [...(ctx.secrets ?? [])];
  if (flags.origin !== undefined) {
    const parsed = trunkOriginOf(flags.origin);
    if (!parsed.ok) {
      usageError(ctx, `--origin: ${parsed.error}`);
      return ctx.exitCode;
    }
    origin = parsed.origin;
    secrets.push(...parsed.secrets);
  }
  const name = (flags.name ?? hostname()).trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name)) {
    usageError(ctx, `--name must be a host name of letters, digits, '.', '_' and '-' (at most 63), got ${JSON.stringify(name)}.`);
    return ctx.exitCode;
  }
  const stateDir = flags.state === undefined ? defaultHostStateDir(ctx.env) : resolve(ctx.cwd, flags.state);
  const notice = (line: string) => ctx.stderr(`colony worker ${name}: ${line}\n`);
  notice(`waiting for a run in ${describeRunState(runStateAt(stateDir, flags.store))}, up to ${flags.workers} worker(s) at once; Ctrl-C stops it after its agents let their tasks go`);
  const printer = flags.quiet === true ? undefined : progressPrinter(ctx, { verbose: flags.verbose === true });
  const result = await runWorkerHost({
    storeUrl: flags.store,
    stateDir,
    origin,
    workers: flags.workers,
    name,
    signal: ctx.signal,
    secrets,
    modelFor: (settings) => resolveRecordedModel(ctx.env, settings.workerModel, settings),
    onEvent: printer,
    notice,
  });
  if (!result.ok) {
    ctx.stderr(`colony worker: ${result.error}\n`);
    return 1;
  }
  notice(`stopped, after working on ${result.runs} run(s)`);
  return EXIT_OK;
}
