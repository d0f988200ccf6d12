import { DEFAULT_GREEN_SETTINGS, resolveRunSettings, type GreenSettings, type RunSettings } from '../../events/run-settings.js';
import type { EventStore } from '../../store/events/event-store.js';
import { resolveBranch } from '../../workspace/workspace.js';
import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { startGreenLoop } from '../green/green-loop.js';
import { type SnapshotOutcome } from '../green/types.js';
import { loadPromptSet } from '../prompts/prompt-set.js';
import { openRunStores } from '../setup/run-stores.js';
import { lockSession } from './session-prelude.js';
import { recordedTrunk } from '../../workspace/checkout/trunk-branch.js';
import { withSessionCommands } from './session-commands.js';
import { describeRunState, mayHoldRuns } from '../setup/run-state.js';
import { viewsDirOf } from '../setup/state-directory.js';
import { Wakeups } from '../wakeups.js';
import { goalAsItStands, runGreenBase } from '../green/green-state.js';
import { prepareSharedDependencies } from '../setup/shared-dependencies.js';
import { sandboxedInstall } from '../setup/sandboxed-install.js';

export interface GreenNowOptions {
  readonly repoDir: string;
  /** Defaults to `defaultStateDir(repoDir)`. */
  readonly stateDir?: string;
  /** The PostgreSQL store the run's log is in, when it is not in the state directory. */
  readonly storeUrl?: string;
  /** The check to run; else the last run's `--check`, its goal's colony-spec, or the project's own. */
  readonly check?: string;
  /** Tag the commit if the green branch moves to it. */
  readonly tag?: boolean;
  readonly secrets?: readonly string[];
  readonly bisectParallel: number;
  readonly signal: AbortSignal;
}

export type GreenNowResult =
  | { readonly ok: false; readonly error: string }
  | {
      readonly ok: true;
      /** The run whose log the snapshot was recorded in: the state directory's latest. */
      readonly runId: string;
      /** The snapshot and the failures open after it, or why there is none. */
      readonly outcome: SnapshotOutcome;
      readonly branch: string;
      /** Where the green branch points after it; null when it does not exist. */
      readonly green: string | null;
      readonly mainCommit: string;
    };

/**
 * `colony green --now` while no run goes: the release snapshot of main, taken in this process.
 * It checks main's latest commit in a view, moves the green branch forward when it passes, and
 * bisects a failure to the commits that brought it, as the run's loop does; it is recorded in
 * the state directory's latest run, whose settings (sandbox, check, branch, setup) it takes,
 * with the dependencies of main's commit installed as the workers have them. The user's
 * checkout and tree are left alone. A running run is asked instead (see the CLI).
 */
export async function runGreenNow(options: GreenNowOptions): Promise<GreenNowResult> {
  const session = await lockSession(options.repoDir, options.stateDir, options.storeUrl);
  if (!session.ok) return session;
  const { stateDir } = session;
  let repo = session.repo;
  try {
    const loaded = loadPromptSet(repo.root);
    if (!loaded.ok) return loaded;
    if (!mayHoldRuns(session.state)) {
      return { ok: false, error: `there is no colony run in ${stateDir}: colony green --now checks the main of a colony run. Start one with colony run GOAL.md, or pass its state directory with --state.` };
    }
    const stores = await openRunStores(session.state, options.secrets ?? []);
    if (!stores.ok) return stores;
    const { events, tasks } = stores;
    try {
      const last = await latestRun(events);
      if (last === null) return { ok: false, error: `there is no colony run in ${describeRunState(session.state)}: colony green --now checks the main of a colony run. Start one with colony run GOAL.md.` };
      const configured: GreenSettings = last.settings?.green ?? DEFAULT_GREEN_SETTINGS;
      const settings: GreenSettings = {
        ...configured,
        check: options.check ?? configured.check,
        tag: options.tag === true || configured.tag,
        everyCommits: null,
        everyMs: null,
      };
      // The trunk the run landed on, not the branch checked out now.
      const trunk = await recordedTrunk(repo, last.settings?.trunk ?? null);
      if (!trunk.ok) return trunk;
      repo = trunk.chosen.repo;
      const mainCommit = await resolveBranch(repo, repo.mainBranch);
      const logRunId = last.runId;
      const outcome = await withSessionCommands(session, last.settings?.sandbox, async ({ commands }) => {
        const system = createAgentRecorder(events, logRunId, 'system', () => undefined);
        // The environment the run's workers have, for main as it is now: made here when main's dependencies changed since.
        const dependencies = await prepareSharedDependencies({
          repo,
          commit: mainCommit,
          stateDir,
          enabled: last.settings?.sharedDependencies ?? true,
          setup: last.settings?.setup ?? null,
          runInstall: sandboxedInstall(commands),
          record: system.record,
          signal: options.signal,
        });
        if (!dependencies.ok) {
          await system.flush();
          return { ok: false as const, error: `the setup failed, so main cannot be checked as the workers would: ${dependencies.error}\nTo fix it: ${dependencies.fix}.` };
        }
        const loop = await startGreenLoop({
          runId: logRunId,
          repo,
          events,
          tasks,
          rootTaskId: last.rootTaskId ?? '',
          viewsDir: viewsDirOf(stateDir),
          commands,
          dependencyLayers: dependencies.layers,
          prompts: loaded.prompts,
          settings,
          record: system.record,
          flush: system.flush,
          goal: async () => (last.rootTaskId === undefined ? '' : goalAsItStands(events, tasks, logRunId, last.rootTaskId)),
          base: await runGreenBase(events, logRunId, mainCommit),
          parallel: options.bisectParallel,
          wakeups: new Wakeups(),
          now: Date.now,
          signal: options.signal,
        });
        try {
          return { ok: true as const, outcome: await loop.checkNow() };
        } finally {
          await loop.stop();
          await system.flush();
        }
      }, logRunId);
      if (!outcome.ok) return outcome;
      const green = await resolveBranch(repo, settings.branch).catch(() => null);
      return { ok: true, runId: logRunId, outcome: outcome.outcome, branch: settings.branch, green, mainCommit };
    } finally {
      await stores.close();
    }
  } finally {
    await closeRepositoryObjects(repo);
    await session.release();
  }
}

/** The latest `colony run` of a log: its id, its settings and its root task. */
async function latestRun(events: EventStore): Promise<{ runId: string; settings: RunSettings | null; rootTaskId: string | undefined } | null> {
  const started = (await events.read({ types: ['run.started'] })).findLast((event) => event.type === 'run.started' && event.data.mode === 'run');
  if (started === undefined) return null;
  const runEvents = await events.read({ runId: started.runId, types: ['run.configured', 'task.created'] });
  const configured = runEvents.find((event) => event.type === 'run.configured');
  const root = runEvents.find((event) => event.type === 'task.created' && event.data.parentTaskId === null);
  return {
    runId: started.runId,
    settings: configured?.type === 'run.configured' ? resolveRunSettings(configured.data.settings) : null,
    rootTaskId: root?.type === 'task.created' ? root.data.taskId : undefined,
  };
}
