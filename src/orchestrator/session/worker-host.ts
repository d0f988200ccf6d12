import { setMaxListeners } from 'node:events';
import type { RecordedEvent } from '../../events/event-types.js';
import { newShortId } from '../../events/ids.js';
import type { RunSettings } from '../../events/run-settings.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { EventStore } from '../../store/events/event-store.js';
import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import { runGit } from '../../workspace/git/git.js';
import type { Repository } from '../../workspace/git/repository.js';
import { trunkOriginOf, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';
import { errorMessage } from '../../errors/error-message.js';
import { createAgentRecorder, type EventStoreRecorder } from '../agent-recorder.js';
import type { RunContext } from '../context/run-context.js';
import { createDiskGuard } from '../disk-guard.js';
import { createMainHealth } from '../green/main-health.js';
import { createWorkInFlight } from '../in-flight/work-in-flight.js';
import { loadPromptSet } from '../prompts/prompt-set.js';
import { runTasks } from '../runner/task-runner.js';
import { openCommandRunners } from '../setup/command-sandbox.js';
import { openHostMirror } from '../setup/host-mirror.js';
import { acquireRunLock, type RunLock } from '../setup/run-lock.js';
import { findUnfinishedRun, type UnfinishedRun } from '../setup/run-history.js';
import { runStateAt, storeLockIsFree, type RunState } from '../setup/run-state.js';
import { openRunStores, type RunStores } from '../setup/run-stores.js';
import { dependencyCacheDir, prepareSharedDependencies } from '../setup/shared-dependencies.js';
import { sandboxedInstall } from '../setup/sandboxed-install.js';
import { prepareStateDir, stateLockPath, viewsDirOf, workspacesDirOf } from '../setup/state-directory.js';
import { sweepWorkspaces } from '../setup/workspace-sweep.js';
import { chooseWorkspaces, defaultDiskCapBytes, startWorkspaces } from '../setup/workspace-setup.js';
import { Wakeups } from '../wakeups.js';
import { recordedOriginOf } from './trunk-record.js';
import { createRedactingChatModel } from './redacting-chat-model.js';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import { BUDGET_EVENT_TYPES, followRunBudget } from '../budget/budget-follower.js';
import { createRunBudget } from '../budget/run-budget.js';

/** How often a waiting host looks for a run to work on, and a working one checks its run still goes. */
const LOOK_EVERY_MS = 1_000;

export interface WorkerHostOptions {
  /** The PostgreSQL store the runs are in. */
  readonly storeUrl: string;
  /** This host's own state: its copy of the origin, its workspaces, its shared dependencies. */
  readonly stateDir: string;
  /** Where the runs' trunks are; absent: where each run recorded it (`--origin`, or its repository on the run's machine). */
  readonly origin?: TrunkOrigin | undefined;
  /** The most workers this host runs at once. */
  readonly workers: number;
  /** This host's name, in its events and its leases. */
  readonly name: string;
  /** The worker model a run names, with this host's keys; or why it cannot be used here. */
  readonly modelFor: (settings: RunSettings) => { readonly ok: true; readonly model: ChatModel } | { readonly ok: false; readonly error: string };
  /** Aborting drains the host: its agents stop at a safe point, their tasks are released, and it returns. */
  readonly signal: AbortSignal;
  /** Values that must never be recorded (keys, the store's and the origin's passwords). */
  readonly secrets: readonly string[];
  readonly onEvent?: ((event: RecordedEvent) => void) | undefined;
  /** What the host is doing, one line at a time, for the person who started it. */
  readonly notice?: ((line: string) => void) | undefined;
  readonly lookEveryMs?: number | undefined;
}

export type WorkerHostResult = { readonly ok: true; readonly runs: number } | { readonly ok: false; readonly error: string };

/**
 * `colony worker`: one host of a run in PostgreSQL. It waits for a run whose process is live,
 * claims that run's worker tasks up to its limit (planners stay with the run's own process),
 * makes their workspaces from its own copy of the origin and lands their work on the origin's
 * trunk. When the run ends or its process goes away, the host lets its tasks go and waits for
 * the next; when it is stopped, it drains and returns.
 */
export async function runWorkerHost(options: WorkerHostOptions): Promise<WorkerHostResult> {
  const prepared = prepareStateDir(options.stateDir);
  if (!prepared.ok) return prepared;
  const locked = acquireRunLock(stateLockPath(options.stateDir), `the state directory ${options.stateDir}`);
  if (!locked.ok) return { ok: false, error: locked.heldElsewhere ? `${locked.error}: one host per state directory; give this one its own with --state` : locked.error };
  const state = runStateAt(options.stateDir, options.storeUrl);
  try {
    const stores = await openRunStores(state, options.secrets);
    if (!stores.ok) return stores;
    try {
      let runs = 0;
      const served = new Set<string>();
      while (!options.signal.aborted) {
        const run = await liveRun(stores.events, state);
        if (run === null || served.has(`${run.runId}:${run.resumes}`)) {
          await pause(options.lookEveryMs ?? LOOK_EVERY_MS, options.signal);
          continue;
        }
        // Each life of a run is served once: a host that left one (its setup failed) waits for the next.
        served.add(`${run.runId}:${run.resumes}`);
        runs += 1;
        const outcome = await serveRun(options, state, stores, locked.lock, run);
        if (!outcome.ok) options.notice?.(`run ${run.runId}: ${outcome.error}`);
      }
      return { ok: true, runs };
    } finally {
      await stores.close();
    }
  } finally {
    locked.lock.release();
  }
}

/** The unfinished run in the store whose process holds its run lock now, or null. */
async function liveRun(events: EventStore, state: RunState): Promise<(UnfinishedRun & { readonly settings: RunSettings }) | null> {
  const run = await findUnfinishedRun(events);
  if (run === null || run.settings === null) return null;
  if (await storeLockIsFree(state)) return null;
  return { ...run, settings: run.settings };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Where the run's trunk is, as this host was told or as the run recorded it. */
async function originOf(options: WorkerHostOptions, events: EventStore, run: UnfinishedRun): Promise<{ readonly ok: true; readonly origin: TrunkOrigin } | { readonly ok: false; readonly error: string }> {
  if (options.origin !== undefined) return { ok: true, origin: options.origin };
  const recorded = await recordedOriginOf(events, run.runId);
  if (recorded === null) return { ok: false, error: `the run recorded no origin for its trunk: start this host with --origin URL, the URL the run was started with.` };
  const parsed = trunkOriginOf(recorded);
  return parsed.ok ? { ok: true, origin: parsed.origin } : parsed;
}

/** The commit the run started from, as `run.started` recorded it; null for a run that recorded none. */
async function recordedStart(events: EventStore, runId: string): Promise<string | null> {
  const started = (await events.read({ runId, types: ['run.started'] })).at(0);
  return started?.type === 'run.started' ? (started.data.trunk?.commit ?? null) : null;
}

async function holds(repo: Repository, tip: string, commit: string): Promise<boolean> {
  return (await runGit(repo.root, ['merge-base', '--is-ancestor', commit, tip])).code === 0;
}

/** Works on one life of a run until it ends, its process goes, or the host is stopped. */
async function serveRun(options: WorkerHostOptions, state: RunState, stores: RunStores, lock: RunLock, run: UnfinishedRun & { readonly settings: RunSettings }): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  const { settings, runId } = run;
  const { stateDir } = options;
  const origin = await originOf(options, stores.events, run);
  if (!origin.ok) return origin;
  const resolved = options.modelFor(settings);
  if (!resolved.ok) return { ok: false, error: `the run's worker model ${settings.workerModel} cannot be used on this host: ${resolved.error}` };
  // As in the run's own process: a provider's error that quotes a key is redacted before anyone sees it.
  const model = createRedactingChatModel(resolved.model, createSecretRedactor(options.secrets));
  if (settings.trunk === null) return { ok: false, error: `the run ${runId} recorded no trunk: it was started by an older colony, which worker hosts cannot join.` };
  const mirror = await openHostMirror(stateDir, origin.origin, settings.trunk);
  if (!mirror.ok) return mirror;
  const { repo } = mirror;
  // An origin that does not hold the run's start is not the run's: landing there would put its work where no one looks.
  const startCommit = await recordedStart(stores.events, runId);
  if (startCommit !== null && !(await holds(repo, mirror.trunkCommit, startCommit))) {
    return { ok: false, error: `the origin ${origin.origin.url} is not the run's: its ${settings.trunk} does not hold ${startCommit.slice(0, 12)}, where the run started. Give this host the origin the run was started with (--origin).` };
  }
  const root = (await stores.tasks.listTasks(runId)).find((task) => task.parentTaskId === null);
  if (root === undefined) return { ok: false, error: `the run ${runId} has no root task in the store` };
  const loaded = loadPromptSet(repo.root);
  if (!loaded.ok) return loaded;
  // The host works on the run until the host is stopped, the run ends, or its process goes away.
  const leave = new AbortController();
  setMaxListeners(0, leave.signal);
  const signal = AbortSignal.any([options.signal, leave.signal]);
  setMaxListeners(0, signal);
  const system = createAgentRecorder(stores.events, runId, 'system', options.onEvent);
  const opened = await openCommandRunners({
    settings: settings.sandbox,
    runId,
    repo,
    stateDir,
    workDirs: [dependencyCacheDir(stateDir), workspacesDirOf(stateDir), viewsDirOf(stateDir)],
    record: system.record,
    host: options.name,
  });
  if (!opened.ok) return opened;
  const commands = opened.runners;
  let released = 0;
  let reason = 'the host was stopped';
  try {
    system.record({ type: 'host.joined', data: { host: options.name, workers: options.workers, origin: origin.origin.url, pid: process.pid } });
    await system.flush();
    options.notice?.(`working on run ${runId} ("${run.title}"), landing on ${origin.origin.url}`);
    const watch = watchRun(stores.events, state, runId, options.lookEveryMs ?? LOOK_EVERY_MS, signal, (why) => {
      reason = why;
      leave.abort(why);
    });
    try {
      const dependencies = await prepareSharedDependencies({
        repo,
        commit: mirror.trunkCommit,
        stateDir,
        enabled: settings.sharedDependencies,
        setup: settings.setup,
        runInstall: sandboxedInstall(commands),
        record: system.record,
        signal,
      });
      if (!dependencies.ok) {
        reason = `its setup failed: ${dependencies.error}`;
        return { ok: false, error: `the setup failed on this host: ${dependencies.error}\nTo fix it: ${dependencies.fix}.` };
      }
      const chosen = await chooseWorkspaces(repo, stateDir, settings.workspaces);
      if (!chosen.ok) {
        reason = chosen.error;
        return chosen;
      }
      const disk = createDiskGuard({ events: stores.events, path: stateDir, record: system.record, now: Date.now });
      const workspaces = await startWorkspaces({ repo, stateDir, lock, chosen, record: system.record, diskCapBytes: settings.workspaceDiskCapBytes ?? (await defaultDiskCapBytes(stateDir)) });
      if (!workspaces.ok) {
        reason = workspaces.error;
        return workspaces;
      }
      // The run's limits hold on this host too: its ledger folds every event of the run, this
      // host's as they happen and the others' from the store; the run's own process records the budget's events.
      const budget = createRunBudget(settings.limits, run.startedAt, () => undefined);
      const spent = budget === undefined ? [] : await stores.events.read({ runId, types: [...BUDGET_EVENT_TYPES] });
      for (const event of spent) budget?.observe(event);
      const budgetFollower = budget === undefined ? null : followRunBudget({ events: stores.events, runId, ledger: budget, afterSeq: spent.at(-1)?.seq ?? 0 });
      const onEvent = (event: RecordedEvent): void => {
        budget?.observe(event);
        budgetFollower?.own(event);
        options.onEvent?.(event);
      };
      try {
        const context: RunContext = {
          runId,
          repo,
          events: stores.events,
          tasks: stores.tasks,
          wakeups: new Wakeups(),
          dependencyLayers: dependencies.layers,
          settleConflicts: dependencies.settleConflicts,
          workspaces: workspaces.provider,
          workspaceQuota: workspaces.quota ?? undefined,
          workspacesDir: workspacesDirOf(stateDir),
          viewsDir: viewsDirOf(stateDir),
          workerModel: model,
          plannerModel: model,
          settings,
          prompts: loaded.prompts,
          commands,
          now: Date.now,
          workInFlight: createWorkInFlight(stores.events, runId),
          mainHealth: createMainHealth(stores.events, runId),
          onEvent,
          disk,
          budget,
        };
        const outcome = await runTasks({ context, holder: `${options.name}/${newShortId('runner')}`, workers: () => options.workers, leaseMs: settings.leaseMs, rootTaskId: root.id, signal, plans: false });
        released = outcome.released;
        if (outcome.failure !== null) reason = `the store failed under it: ${outcome.failure}`;
        else if (outcome.rootHandoff !== null) reason = 'the run finished';
        // Nothing of this host's is resumed by another: what its stopped workers left is salvaged and removed.
        await sweepWorkspaces({ repo, stateDir, lock, workspacesDir: workspacesDirOf(stateDir), providers: [workspaces.provider], record: system.record });
      } finally {
        await budgetFollower?.stop();
        await workspaces.provider.close();
      }
      return { ok: true };
    } finally {
      await watch.stop();
    }
  } catch (error) {
    reason = `colony failed on this host: ${errorMessage(error)}`;
    return { ok: false, error: reason };
  } finally {
    await recordLeft(system, options.name, reason, released);
    options.notice?.(`left run ${runId}: ${reason}${released === 0 ? '' : ` (${released} task(s) released)`}`);
    await commands.close();
    await closeRepositoryObjects(repo);
  }
}

async function recordLeft(system: EventStoreRecorder, host: string, reason: string, released: number): Promise<void> {
  try {
    system.record({ type: 'host.left', data: { host, reason, released } });
    await system.flush();
  } catch {
    // The store is gone: there is no one to tell.
  }
}

/**
 * Looks every `everyMs` whether the run still goes: it ended (`run.ended`), or its process
 * let go of the run lock. Calls `leave` once with why, for the host to let its tasks go.
 */
function watchRun(events: EventStore, state: RunState, runId: string, everyMs: number, signal: AbortSignal, leave: (why: string) => void): { stop(): Promise<void> } {
  const stop = new AbortController();
  const watching = AbortSignal.any([signal, stop.signal]);
  const endsIn = async () => (await events.read({ runId, types: ['run.ended'] })).length;
  const looking = (async () => {
    try {
      // A resumed run has the ends of its earlier lives in the log already: only a new one counts.
      const endedBefore = await endsIn();
      while (!watching.aborted) {
        await pause(everyMs, watching);
        if (watching.aborted) return;
        if ((await endsIn()) > endedBefore) return leave('the run ended');
        if (await storeLockIsFree(state)) return leave("the run's process went away");
      }
    } catch (error) {
      leave(`the store could not be read: ${errorMessage(error)}`);
    }
  })();
  return {
    async stop() {
      stop.abort();
      await looking;
    },
  };
}
