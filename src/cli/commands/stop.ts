import type { Command } from 'commander';
import { stopAgent } from '../../orchestrator/steering/steering-controls.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { addSteeringOptions, steerRun } from '../state-dir-flags.js';

interface StopFlags {
  readonly reason?: string;
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly json?: boolean;
}

export function defineStopCommand(command: Command, ctx: CommandContext): void {
  command
    .argument('<id>', 'the task id or agent id of the agent to stop; colony status lists them')
    .option('--reason <text>', 'why, told to its planner in the handoff');
  addSteeringOptions(command)
    .option('--json', 'print the outcome as JSON')
    .action(async (target: string, _given: StopFlags, self: Command) => {
      const configured = applyConfiguration<StopFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await stop(configured.ctx, target, configured.flags);
    });
}

function stop(ctx: CommandContext, target: string, flags: StopFlags): Promise<number> {
  return steerRun(ctx, flags, async (access) => {
    const runId = access.run.runId;
    const result = await stopAgent(access.stores, runId, target, flags.reason ?? 'no reason given');
    if (!result.ok) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    const { agent, request, repeated } = result;
    if (flags.json === true) {
      ctx.stdout(`${JSON.stringify({ runId, agent, requestSeq: request.seq, repeated, live: access.live }, null, 2)}\n`);
      return EXIT_OK;
    }
    const who = `the ${agent.role} ${agent.agentId ?? '(starting)'} (task ${agent.taskId}, "${agent.title}")`;
    if (repeated) {
      ctx.stdout(`A stop of ${who} of run ${runId} was asked for already (${request.reason}): nothing changed.\n`);
      return EXIT_OK;
    }
    const when = access.live
      ? 'it stops at its next step, and its task closes as failed with your reason, for its planner to publish again.'
      : 'the run is not running now; its task is closed as failed with your reason when you continue the run with colony resume, and its agent is not taken up again.';
    const children = agent.role === 'sub-planner' ? ' The tasks it published go on to their end.' : '';
    ctx.stdout(`Stopping ${who} of run ${runId}: ${when}${children}\n`);
    return EXIT_OK;
  });
}
