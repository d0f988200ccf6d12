import type { Command } from 'commander';
import { pullRunAndon, releaseRunAndon } from '../../orchestrator/steering/steering.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { addSteeringOptions, steerRun } from '../state-dir-flags.js';

interface AndonFlags {
  readonly release?: boolean;
  readonly reason?: string;
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly json?: boolean;
}

export function defineAndonCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--release', 'release your pause: tasks are claimed again')
    .option('--reason <text>', 'why, recorded with the change and shown by colony status');
  addSteeringOptions(command)
    .option('--json', 'print the outcome as JSON')
    .action(async (_given: AndonFlags, self: Command) => {
      const configured = applyConfiguration<AndonFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await andon(configured.ctx, configured.flags);
    });
}

function andon(ctx: CommandContext, flags: AndonFlags): Promise<number> {
  return steerRun(ctx, flags, async (access) => {
    const runId = access.run.runId;
    const releasing = flags.release === true;
    const reason = flags.reason ?? (releasing ? 'released by the user' : 'paused by the user');
    const result = releasing ? await releaseRunAndon(access.stores, runId, reason) : await pullRunAndon(access.stores, runId, reason);
    if (!result.ok) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    const andon = await access.stores.tasks.runAndon(runId);
    if (flags.json === true) {
      ctx.stdout(`${JSON.stringify({ runId, paused: andon !== null, reason: andon?.reason ?? reason, changed: result.change !== null, live: access.live }, null, 2)}\n`);
      return EXIT_OK;
    }
    const later = access.live ? '' : ' The run is not running now; this holds when you continue it with colony resume.';
    if (releasing) {
      ctx.stdout(
        result.change === null
          ? `Spawning was not paused by you in run ${runId}: nothing to release.\n`
          : `Spawning released across run ${runId}: its tasks are claimed again.${later}\n`,
      );
    } else {
      ctx.stdout(
        result.change === null
          ? `Spawning was already paused by you across run ${runId} (${andon?.reason ?? reason}): nothing changed.\n`
          : `Spawning paused across run ${runId}: no task is claimed until you run colony andon --release; agents already running go on.${later}\n`,
      );
    }
    return EXIT_OK;
  });
}
