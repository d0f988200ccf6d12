import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { EVENT_TYPES, type EventType } from '../../events/event-types.js';
import { formatEventLine } from '../../observe/view/format-event.js';
import { mayHoldRuns, openRunLogToRead } from '../../orchestrator/setup/run-state.js';
import { eventsDatabasePath } from '../../orchestrator/setup/state-directory.js';
import type { EventQuery } from '../../store/events/event-store.js';
import { EXIT_OK, positiveInteger, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, runStateOf, storeOption } from '../state-dir-flags.js';

interface EventsFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly json?: boolean;
  readonly follow?: boolean;
  readonly agent?: string;
  readonly run?: string;
  readonly type?: EventType[];
  readonly since?: number;
  readonly until?: number;
  readonly limit?: number;
}

const FOLLOW_POLL_MS = 200;

export function defineEventsCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository whose runs to show', '.')
    .option('--state <dir>', `the state directory (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--json', 'one JSON object per line')
    .option('--follow', 'keep printing new events as they are recorded (Ctrl-C stops)')
    .option('--agent <id>', 'only events of this agent')
    .option('--run <id>', 'only events of this run')
    .option('--type <types>', `only these event types, comma-separated (${EVENT_TYPES.join(', ')})`, parseTypes)
    .option('--since <time>', 'only events at or after this time (ISO 8601)', parseTime)
    .option('--until <time>', 'only events at or before this time (ISO 8601)', parseTime)
    .option('--limit <n>', 'at most this many events', positiveInteger)
    .action(async (_given: EventsFlags, self: Command) => {
      const configured = applyConfiguration<EventsFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await printEvents(configured.ctx, configured.flags);
    });
}

async function printEvents(ctx: CommandContext, flags: EventsFlags): Promise<number> {
  const state = runStateOf(ctx, flags);
  if (!mayHoldRuns(state)) {
    usageError(ctx, `there is no colony event log at ${eventsDatabasePath(state.stateDir)}.`, 'Pass the repository a run used with --repo, or its state directory with --state.');
    return ctx.exitCode;
  }
  if (flags.since !== undefined && flags.until !== undefined && flags.until < flags.since) {
    usageError(ctx, `--until ${new Date(flags.until).toISOString()} is before --since ${new Date(flags.since).toISOString()}: no event can be in between.`, 'Swap them, or leave one out.');
    return ctx.exitCode;
  }
  const store = await openRunLogToRead(state);
  const query: EventQuery = {
    ...(flags.agent === undefined ? {} : { agentId: flags.agent }),
    ...(flags.run === undefined ? {} : { runId: flags.run }),
    ...(flags.type === undefined ? {} : { types: flags.type }),
    ...(flags.since === undefined ? {} : { since: flags.since }),
    ...(flags.until === undefined ? {} : { until: flags.until }),
  };
  try {
    let afterSeq = 0;
    let remaining = flags.limit ?? Number.POSITIVE_INFINITY;
    for (;;) {
      const events = await store.read({ ...query, afterSeq, ...(Number.isFinite(remaining) ? { limit: remaining } : {}) });
      for (const event of events) {
        ctx.stdout(flags.json === true ? `${JSON.stringify(event)}\n` : `${formatEventLine(event)}\n`);
        afterSeq = event.seq;
      }
      remaining -= events.length;
      if (flags.follow !== true || remaining <= 0 || ctx.signal.aborted) return EXIT_OK;
      try {
        await sleep(FOLLOW_POLL_MS, undefined, { signal: ctx.signal });
      } catch {
        return EXIT_OK;
      }
    }
  } finally {
    await store.close();
  }
}

function parseTypes(value: string): EventType[] {
  const types = value.split(',').map((type) => type.trim()).filter((type) => type !== '');
  const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown event type ${unknown.join(', ')}; known types: ${EVENT_TYPES.join(', ')}.`);
  return types as EventType[];
}

function parseTime(value: string): number {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new InvalidArgumentError(`"${value}" is not a time; use ISO 8601, e.g. 2026-11-29T14:00:00Z.`);
  return time;
}
