import type { Command } from 'commander';
import { sendToPlanner } from '../../orchestrator/steering/steering.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { addSteeringOptions, steerRun } from '../state-dir-flags.js';

interface SayFlags {
  readonly to?: string;
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly json?: boolean;
}

export function defineSayCommand(command: Command, ctx: CommandContext): void {
  command
    .argument('<message...>', 'what to tell the planner (quote it, or give it as several words)')
    .option('--to <id>', 'the task id or agent id of the planner to tell (default: the root planner); colony status lists them');
  addSteeringOptions(command)
    .option('--json', 'print who it went to as JSON')
    .action(async (words: string[], _given: SayFlags, self: Command) => {
      const configured = applyConfiguration<SayFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await say(configured.ctx, words.join(' '), configured.flags);
    });
}

function say(ctx: CommandContext, text: string, flags: SayFlags): Promise<number> {
  return steerRun(ctx, flags, async (access) => {
    const sent = await sendToPlanner(access.stores, access.run.runId, flags.to ?? null, text);
    if (!sent.ok) {
      usageError(ctx, sent.error);
      return ctx.exitCode;
    }
    const { recipient } = sent;
    if (flags.json === true) {
      ctx.stdout(`${JSON.stringify({ runId: access.run.runId, recipient, inboxSeq: sent.inboxSeq, live: access.live }, null, 2)}\n`);
      return EXIT_OK;
    }
    const role = recipient.role === 'root-planner' ? 'root planner' : 'sub-planner';
    const who =
      recipient.agentId === null
        ? `the ${role} of task ${recipient.taskId} ("${recipient.title}", not started yet)`
        : `the ${role} ${recipient.agentId} (task ${recipient.taskId}, "${recipient.title}")`;
    const when = access.live
      ? 'it reads it before its next model call'
      : 'the run is not running, so it reads it when you continue the run with colony resume';
    ctx.stdout(`Sent to ${who} of run ${access.run.runId}: ${when}.\n`);
    return EXIT_OK;
  });
}
