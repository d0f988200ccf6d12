import { resolve } from 'node:path';
import type { Command } from 'commander';
import { openReplay, type ReplayRun } from '../../observe/replay/replay-run.js';
import { replaySource } from '../../ui/tui/sources.js';
import { agentDiffReader } from '../agent-diff.js';
import { EXIT_OK, positiveNumber, usageError, type CommandContext } from '../command-context.js';
import { showTerminalUi } from '../terminal-ui.js';
import { openRunLog, shownRun } from './tui.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, storeOption } from '../state-dir-flags.js';

interface ReplayFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly run?: string;
  readonly speed: number;
  readonly at?: string;
  readonly paused?: boolean;
  readonly json?: boolean;
}

export function defineReplayCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run worked on', '.')
    .option('--state <dir>', `the state directory the run used (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--run <id>', 'the run to play (default: the latest)')
    .option('--speed <x>', 'how many times faster than it happened (keys < and > change it)', positiveNumber('a speed such as 1, 10 or 0.5'), 1)
    .option('--at <time>', 'start at this moment: a time (ISO 8601) or how long after the start (90s, 12m, 1h30m)')
    .option('--paused', 'start paused (p plays, . steps one event)')
    .option('--json', 'print the run as it stood at --at (or at its end) as JSON, without the terminal UI')
    .action(async (_given: ReplayFlags, self: Command) => {
      const configured = applyConfiguration<ReplayFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await replay(configured.ctx, configured.flags);
    });
}

async function replay(ctx: CommandContext, flags: ReplayFlags): Promise<number> {
  const opened = await openRunLog(ctx, flags, 'colony replay', flags.json !== true);
  if (opened === null) return ctx.exitCode;
  const { events: store, terminal } = opened;
  try {
    const found = await openReplay(store, flags.run);
    if (!found.ok) {
      usageError(ctx, found.error, 'colony status lists the latest run.');
      return ctx.exitCode;
    }
    const run = found.replay;
    const at = flags.at === undefined ? null : momentOf(flags.at, run);
    if (typeof at === 'string') {
      usageError(ctx, at);
      return ctx.exitCode;
    }
    if (flags.json === true) {
      await run.advanceTo(at ?? run.endsAt);
      ctx.stdout(`${JSON.stringify({ at: run.clock, ...run.view() }, null, 2)}\n`);
      return EXIT_OK;
    }
    if (at !== null) await run.advanceTo(at);
    if (terminal === undefined) throw new Error('openRunLog returned no terminal for a command that needs one');
    const source = replaySource(run, agentDiffReader((await shownRun(store, run.runId)).repo ?? resolve(ctx.cwd, flags.repo)), { speed: flags.speed, paused: flags.paused === true });
    await showTerminalUi(terminal, { source, actions: null }, { exitOnCtrlC: true, color: ctx.color ?? true, signal: ctx.signal }).closed;
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/;

/** `--at` as a moment of the run: an ISO 8601 time, or a span after its start; a string says what was wrong. */
export function momentOf(text: string, run: Pick<ReplayRun, 'startsAt' | 'endsAt'>): number | string {
  if (/^\d+(\.\d+)?$/.test(text.trim())) return `--at ${text} has no unit: say 90s, 12m or 1h30m for a span after the run's start, or give a time such as 2026-11-30T14:05:00Z.`;
  const span = DURATION.exec(text.trim());
  let at: number;
  if (span !== null && text.trim() !== '') {
    const [, hours = '0', minutes = '0', seconds = '0'] = span;
    at = run.startsAt + (Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds)) * 1000;
  } else {
    at = Date.parse(text);
    if (Number.isNaN(at)) return `--at "${text}" is neither a time (2026-11-30T14:05:00Z) nor a span after the run's start (90s, 12m, 1h30m).`;
  }
  const range = `${new Date(run.startsAt).toISOString()} to ${new Date(run.endsAt).toISOString()}`;
  if (at < run.startsAt || at > run.endsAt) return `--at ${text} is outside the run, which went from ${range}.`;
  return at;
}

