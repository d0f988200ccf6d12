import type { Command } from 'commander';
import { formatRunAnalysis } from '../../observe/analysis/format-run-analysis.js';
import { createRunAnalysisFold } from '../../observe/analysis/run-analysis-fold.js';
import { type RunAnalysis } from '../../observe/analysis/types.js';
import { readAll } from '../../observe/replay/run-reader.js';
import { describeRunState, mayHoldRuns, openRunLogToRead } from '../../orchestrator/setup/run-state.js';
import { eventsDatabasePath } from '../../orchestrator/setup/state-directory.js';
import type { EventStore } from '../../store/events/event-store.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, runStateOf, storeOption } from '../state-dir-flags.js';

interface AnalyzeFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly run?: string;
  readonly json?: boolean;
}

export function defineAnalyzeCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--run <id>', 'the run to analyse (default: the latest)')
    .option('--json', 'print the analysis as one JSON object')
    .action(async (_given: AnalyzeFlags, self: Command) => {
      const configured = applyConfiguration<AnalyzeFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await analyze(configured.ctx, configured.flags);
    });
}

async function analyze(ctx: CommandContext, flags: AnalyzeFlags): Promise<number> {
  const state = runStateOf(ctx, flags);
  if (!mayHoldRuns(state)) {
    usageError(ctx, `there is no colony event log at ${eventsDatabasePath(state.stateDir)}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start one with colony run.');
    return ctx.exitCode;
  }
  const store = await openRunLogToRead(state);
  try {
    const runId = flags.run ?? (await store.read({ types: ['run.started'] })).at(-1)?.runId;
    if (runId === undefined || (await store.read({ runId, types: ['run.started'], limit: 1 })).length === 0) {
      const which = flags.run === undefined ? 'no run' : `no run ${flags.run}`;
      const hint = flags.run === undefined ? 'Start one with colony run.' : 'Leave out --run for the latest run; colony events --type run.started lists them all.';
      usageError(ctx, `there is ${which} in ${state.storeUrl === undefined ? eventsDatabasePath(state.stateDir) : describeRunState(state)}.`, hint);
      return ctx.exitCode;
    }
    const analysis = await analyzeStoredRun(store, runId);
    ctx.stdout(flags.json === true ? `${JSON.stringify(analysis, null, 2)}\n` : formatRunAnalysis(analysis));
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/** The analysis of one run of a store, read page by page: the fold keeps figures, not events, so a log of millions fits in little memory. */
export async function analyzeStoredRun(events: EventStore, runId: string): Promise<RunAnalysis> {
  const fold = createRunAnalysisFold({ runId });
  for await (const event of readAll(events, { runId })) fold.add(event);
  return fold.result();
}
