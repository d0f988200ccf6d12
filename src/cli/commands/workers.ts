import type { Command } from 'commander';
import { MAX_WORKERS, setWorkers } from '../../orchestrator/steering/steering-controls.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { addSteeringOptions, steerRun } from '../state-dir-flags.js';

interface WorkersFlags {
  readonly reason?: string;
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly json?: boolean;
}

export function defineWorkersCommand(command: Command, ctx: CommandContext): void {
  command
    .argument('<n>', `the most workers at once, from 1 to ${MAX_WORKERS} (planners do not count)`)
    .option('--reason <text>', 'why, recorded with the change');
  addSteeringOptions(command)
    .option('--json', 'print the outcome as JSON')
    .action(async (count: string, _given: WorkersFlags, self: Command) => {
      const configured = applyConfiguration<WorkersFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await workers(configured.ctx, count, configured.flags);
    });
}

async function workers(ctx: CommandContext, count: string, flags: WorkersFlags): Promise<number> {
  if (!/^\s*-?\d+(\.\d+)?\s*$/.test(count)) {
    usageError(ctx, `colony workers takes how many workers may run at once, a whole number from 1 to ${MAX_WORKERS}, got "${count}": e.g. colony workers 2.`);
    return ctx.exitCode;
  }
  return steerRun(ctx, flags, async (access) => {
    const runId = access.run.runId;
    const result = await setWorkers(access.stores, runId, Number(count), flags.reason ?? 'changed by the user');
    if (!result.ok) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    const { previous } = result;
    if (flags.json === true) {
      ctx.stdout(`${JSON.stringify({ runId, workers: result.workers, previous, changed: result.request !== null, live: access.live }, null, 2)}\n`);
      return EXIT_OK;
    }
    if (result.request === null) {
      ctx.stdout(`Run ${runId} already runs up to ${result.workers} worker(s) at once: nothing changed.\n`);
      return EXIT_OK;
    }
    const was = previous === null ? '' : ` (was ${previous})`;
    const when = !access.live
      ? ` The run is not running now; it goes on with ${result.workers} when you continue it with colony resume.`
      : previous !== null && result.workers < previous
        ? ' Workers already running go on; no new one starts until fewer than that run.'
        : ' More start as tasks wait for them.';
    ctx.stdout(`Run ${runId} now runs up to ${result.workers} worker(s) at once${was}.${when}\n`);
    return EXIT_OK;
  });
}
