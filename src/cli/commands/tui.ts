import { resolve } from 'node:path';
import type { Command } from 'commander';
import { followRun } from '../../observe/replay/run-reader.js';
import { describeRunState, mayHoldRuns, openRunLogToRead, type RunState } from '../../orchestrator/setup/run-state.js';
import { eventsDatabasePath } from '../../orchestrator/setup/state-directory.js';
import type { EventStore } from '../../store/events/event-store.js';
import { liveSource } from '../../ui/tui/sources.js';
import { agentDiffReader } from '../agent-diff.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { showTerminalUi, type Terminal } from '../terminal-ui.js';
import { steeringActions } from '../tui-actions.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, runStateOf, storeOption } from '../state-dir-flags.js';

interface TuiFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly run?: string;
}

export function defineTuiCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory the run uses (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--run <id>', 'the run to show (default: the latest)')
    .action(async (_given: TuiFlags, self: Command) => {
      const configured = applyConfiguration<TuiFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await tui(configured.ctx, configured.flags);
    });
}

async function tui(ctx: CommandContext, flags: TuiFlags): Promise<number> {
  const opened = await openRunLog(ctx, flags, 'colony tui');
  if (opened === null) return ctx.exitCode;
  const { events: store, state, terminal } = opened;
  if (terminal === undefined) throw new Error('openRunLog returned no terminal for a command that needs one');
  try {
    const shown = await shownRun(store, flags.run);
    const source = liveSource(followRun(store, { runId: shown.runId }), agentDiffReader(shown.repo ?? resolve(ctx.cwd, flags.repo)));
    const ui = showTerminalUi(terminal, { source, actions: steeringActions(state, ctx.secrets ?? [], shown.runId) }, { exitOnCtrlC: true, color: ctx.color ?? true, signal: ctx.signal });
    await ui.closed;
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/**
 * The log of the state directory or store a viewing command names, opened for reading, and the
 * terminal to draw on; null after saying what is missing (no terminal, no log, no such run).
 */
export async function openRunLog(ctx: CommandContext, flags: TuiFlags, command: string, needsTerminal = true): Promise<{ events: EventStore; state: RunState; terminal: Terminal | undefined } | null> {
  const state = runStateOf(ctx, flags);
  const terminal = ctx.terminal;
  if (needsTerminal && terminal === undefined) {
    usageError(ctx, `${command} draws in a terminal, and this one's input or output is not a terminal.`, 'Run it in a terminal (over SSH, in tmux), or read the run with colony status, colony events --follow or colony analyze.');
    return null;
  }
  if (!mayHoldRuns(state)) {
    usageError(ctx, `there is no colony log at ${eventsDatabasePath(state.stateDir)}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start a run with colony run GOAL.md.');
    return null;
  }
  const store = await openRunLogToRead(state);
  const runs = await store.read({ types: ['run.started'], ...(flags.run === undefined ? {} : { runId: flags.run }) });
  if (runs.length === 0) {
    await store.close();
    const where = describeRunState(state);
    usageError(ctx, flags.run === undefined ? `there is no run in ${where} yet.` : `there is no run ${flags.run} in ${where}.`, 'colony status lists the latest run; start one with colony run GOAL.md.');
    return null;
  }
  return { events: store, state, terminal };
}

/** The run a viewer shows (the given one, or the one started last) and the repository it recorded. */
export async function shownRun(events: EventStore, runId: string | undefined): Promise<{ runId: string; repo: string | null }> {
  const started = (await events.read({ types: ['run.started'], ...(runId === undefined ? {} : { runId }) })).at(-1);
  if (started === undefined) throw new Error('shownRun is called only once openRunLog found the run');
  return { runId: started.runId, repo: started.type === 'run.started' ? started.data.repo : null };
}
