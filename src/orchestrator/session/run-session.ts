import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import type { Handoff } from '../../events/handoff.js';
import { newShortId } from '../../events/ids.js';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { removeLeftoverViews } from '../../workspace/checkout/main-view.js';
import { greenBranchProblem } from '../../workspace/green/green-branch.js';
import { resolveBranch } from '../../workspace/workspace.js';
import type { WorkspaceMethod } from '../../workspace/workspace.js';
import { createAgentRecorder, type EventStoreRecorder } from '../agent-recorder.js';
import type { Exhaustion } from '../budget/budget-ledger.js';
import { budgetSet, createRunBudget } from '../budget/run-budget.js';
import { BUDGET_EVENT_TYPES, followRunBudget, type BudgetFollower } from '../budget/budget-follower.js';
import { resolveRunSettings, type RunSettings, type RunSettingsInput } from '../../events/run-settings.js';
import { createDiskGuard } from '../disk-guard.js';
import type { UnfinishedRun } from '../setup/run-history.js';
import { takeUpRun, type ResumedRun } from '../resume/resume-run.js';
import { abandonRun, openRunStores, readUnfinishedIn, unfinishedRunError, type RunStores } from '../setup/run-stores.js';
import { DEFAULT_MAX_BRIEF_BYTES, readBriefFile, readBriefText } from './brief-file.js';
import { createRedactingChatModel } from './redacting-chat-model.js';
import { startTrunkKeeper } from './trunk-keeper.js';
import { startGreenLoop } from '../green/green-loop.js';
import { type ReleaseVerdict } from '../green/types.js';
import { goalAsItStands, runGreenBase } from '../green/green-state.js';
import { defaultBisectParallel } from '../green/green-settings.js';
import type { RunContext } from '../context/run-context.js';
import { createMainHealth } from '../green/main-health.js';
import { createWorkInFlight } from '../in-flight/work-in-flight.js';
import { loadPromptSet, type PromptSet } from '../prompts/prompt-set.js';
import { keepInlineGoal, recordedGoalOf, type GoalGiven } from './inline-goal.js';
import { dirtyCheckoutProblem, prepareSession, type PreparedSession } from './session-prelude.js';
import { chooseTrunk, defaultGreenBranch, dropUnusedTrunk, makeTrunk, type ChosenTrunk } from '../../workspace/checkout/trunk-branch.js';
import { onTrunk, type Repository } from '../../workspace/git/repository.js';
import { publishTrunk, withOrigin, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';
import { startOriginFollower } from './origin-follower.js';
import { landingsOf, originShown, trunkRecord } from './trunk-record.js';
import { prepareSharedDependencies, refusedBySetup } from '../setup/shared-dependencies.js';
import { sandboxedInstall } from '../setup/sandboxed-install.js';
import { eventsDatabasePath, viewsDirOf, workspacesDirOf } from '../setup/state-directory.js';
import { startSteering } from './run-steering.js';
import { createRunControls, workerLimitFromLog } from '../steering/run-controls.js';
import { runTasks } from '../runner/task-runner.js';
import { sweepWorkspaces } from '../setup/workspace-sweep.js';
import { Wakeups } from '../wakeups.js';
import { chooseWorkspaces, defaultDiskCapBytes, startWorkspaces, type ChosenWorkspaces } from '../setup/workspace-setup.js';
import type { CommandRunners, LateRecorder } from '../setup/command-sandbox.js';
import { withSessionCommands } from './session-commands.js';
import { errorMessage } from '../../errors/error-message.js';

export interface RunSessionOptions {
  readonly repoDir: string;
  /** Defaults to `defaultStateDir(repoDir)`. */
  readonly stateDir?: string | undefined;
  /** A PostgreSQL URL: the run's log and tasks are kept there rather than in the state directory. */
  readonly storeUrl?: string | undefined;
  /**
   * Where the trunk lives for every host (`--origin`): the run pushes its start there, lands
   * there, and its repository's trunk follows it. Absent: the repository is the origin.
   */
  readonly origin?: TrunkOrigin | undefined;
  readonly workerModel: ChatModel;
  readonly plannerModel: ChatModel;
  /**
   * What the run is told, recorded for `colony resume` (see `runSettingsSchema`): what is left
   * out takes the schema's default. The models' specs are the models' own.
   */
  readonly settings: Omit<RunSettingsInput, 'workerModel' | 'plannerModel' | 'goalPath' | 'goalSource'> & GoalGiven;
  /** The largest goal read (`--max-goal-size`); DEFAULT_MAX_BRIEF_BYTES when absent. */
  readonly maxGoalBytes?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: ((event: RecordedEvent) => void) | undefined;
  /**
   * Values that must never be recorded (the API keys in colony's environment, see
   * `secretsInEnvironment`): replaced in every event, task and handoff, and in the models'
   * error messages. Credentials in URLs are replaced whether listed or not.
   */
  readonly secrets?: readonly string[] | undefined;
  /**
   * Start a new run even though the state directory holds an unfinished one (`--new`): that
   * one is recorded as abandoned. Without it, an unfinished run refuses a new one.
   */
  readonly newRun?: boolean | undefined;
  /**
   * False opens the run's stores without syncing their commits, so a crash of the machine can
   * lose the last of them. Only for measuring what durability costs; true when absent.
   */
  readonly durable?: boolean | undefined;
  /** Commits a green bisect checks at once; half the cores (at least one) when absent. */
  readonly bisectParallel?: number | undefined;
}

export type { GoalGiven } from './inline-goal.js';

export type RunSessionResult =
  /** Refused before it started; `failed` when it started and could not go on (its setup failed): exit 1, not a usage error. */
  | { readonly ok: false; readonly error: string; readonly failed?: true }
  | {
      readonly ok: true;
      readonly runId: string;
      /**
       * done: the root planner finished done and the check passed; stopped: interrupted;
       * budget-exhausted: one of the run's limits was used up and the tree wound down.
       */
      readonly status: RunEndStatus;
      /** The run's limit that was used up, or null when none was (or none was set). */
      readonly budgetExhausted: Exhaustion | null;
      readonly rootHandoff: Handoff | null;
      /** The check run on main at the end, or null when there was none (stopped, or no command known). */
      readonly check: MainCheck | null;
      /** The run's trunk: the branch its work landed on. */
      readonly mainBranch: string;
      /** The branch checked out in the user's checkout; the trunk itself when the run landed there. */
      readonly checkedOutBranch: string;
      /** The trunk's commit when this session of the run started. */
      readonly startCommit: string;
      readonly mainCommit: string;
      readonly stateDir: string;
      readonly checkoutProblem: string | null;
      /** Landed work that someone else's move of the trunk took off it and that is still missing, with what to do; null when none is. */
      readonly trunkProblem: string | null;
      /** Why colony stopped the run itself (its store failed), or null. */
      readonly failure: string | null;
      /** From the run's first start to its end, as `run.ended` records it (and `colony status` shows). */
      readonly durationMs: number;
      readonly workspaceMethod: WorkspaceMethod;
      readonly sandboxMethod: CommandRunners['method'];
    };

export type RunEndStatus = 'done' | 'failed' | 'stopped' | 'budget-exhausted';

/**
 * `colony run`: a tree of agents builds a goal in a repository. The root planner's task goes
 * into the store, a runner claims and runs tasks until the root planner finishes, the project's
 * check runs on main, and the user's checkout (untouched while the run goes) is brought up to
 * main at the end. Problems with the input come back as `{ ok: false }` before anything
 * changes; so does an unfinished run in the same state directory, unless `newRun` is set.
 */
export async function runRunSession(given: RunSessionOptions): Promise<RunSessionResult> {
  const redactor = createSecretRedactor(given.secrets ?? []);
  const workerModel = createRedactingChatModel(given.workerModel, redactor);
  const plannerModel = given.plannerModel === given.workerModel ? workerModel : createRedactingChatModel(given.plannerModel, redactor);
  const options: RunSessionOptions = { ...given, workerModel, plannerModel };
  const cap = { maxBytes: options.maxGoalBytes ?? DEFAULT_MAX_BRIEF_BYTES, raiseWith: '--max-goal-size' };
  const goalGiven = options.settings;
  const goal = 'goalText' in goalGiven ? readBriefText(goalGiven.goalText, 'goal', cap) : readBriefFile(goalGiven.goalPath, 'goal', cap);
  if (!goal.ok) return goal;
  const session = await prepareSession(options.repoDir, options.stateDir, options.storeUrl);
  if (!session.ok) return session;
  try {
    const loaded = loadPromptSet(session.repo.root);
    if (!loaded.ok) return loaded;
    const givenTrunk = options.settings.trunk ?? null;
    // Refused before anything is made, as the green loop would refuse it at its first pass.
    const givenGreen = options.settings.green?.branch;
    if (givenGreen !== undefined) {
      const greenBranchRefused = await greenBranchProblem(onTrunk(session.repo, givenTrunk ?? session.repo.checkedOutBranch), givenGreen);
      if (greenBranchRefused !== null) return { ok: false, error: `--green-branch: ${greenBranchRefused}` };
    }
    const dirty = givenTrunk === null ? null : await dirtyCheckoutProblem(onTrunk(session.repo, givenTrunk));
    if (dirty !== null) return { ok: false, error: dirty };
    // Read before anything is made: a refused run leaves no log behind where there was none.
    const unfinished = await readUnfinishedIn(session.state);
    if (!unfinished.ok) return unfinished;
    if (unfinished.run !== null && options.newRun !== true) return { ok: false, error: unfinishedRunError(unfinished.run, session.state, options.stateDir !== undefined) };
    const trunk = await chooseTrunk(session.repo, givenTrunk, goal.title);
    if (!trunk.ok) return trunk;
    const chosen = await chooseWorkspaces(trunk.chosen.repo, session.stateDir, options.settings.workspaces ?? 'auto');
    if (!chosen.ok) return chosen;
    const settings = settingsOf(options, recordedGoalOf(goalGiven, session.stateDir), trunk.chosen.repo);
    // The last steps that may refuse, and the first that change the repository: the goal kept, the run's branch made.
    const kept = keepInlineGoal(goalGiven, settings.goalPath);
    if (!kept.ok) return kept;
    const made = await makeTrunk(trunk.chosen);
    if (!made.ok) return made;
    const published = options.origin === undefined ? null : await publishTrunk(trunk.chosen.repo, options.origin, trunk.chosen.commit);
    if (published !== null && !published.ok) {
      await dropUnusedTrunk(trunk.chosen);
      return published;
    }
    const onItsTrunk = { ...session, repo: options.origin === undefined ? trunk.chosen.repo : withOrigin(trunk.chosen.repo, options.origin) };
    return await withSessionCommands(onItsTrunk, settings.sandbox, async ({ runId, commands, late }) => {
      const stores = await openRunStores(session.state, options.secrets ?? [], options.durable ?? true);
      if (!stores.ok) return stores;
      try {
        if (unfinished.run !== null) await abandonRun(stores.events, unfinished.run);
        const start: RunStart = { kind: 'new', goal, settings, startedAt: Date.now(), trunk: trunk.chosen };
        return await driveRun({ options, session: onItsTrunk, chosen, stores, start, runId, commands, late, prompts: loaded.prompts });
      } finally {
        await stores.close();
      }
    });
  } finally {
    await session.release();
  }
}

/** How a run begins: a new one from its goal, or one taken up again by `colony resume`. */
export type RunStart =
  | {
      readonly kind: 'new';
      readonly goal: { readonly title: string; readonly body: string };
      readonly settings: RunSettings;
      readonly startedAt: number;
      /** The branch the run lands on, made for it or given with `--trunk`. */
      readonly trunk: ChosenTrunk;
    }
  | { readonly kind: 'resume'; readonly unfinished: UnfinishedRun; readonly settings: RunSettings; readonly startedAt: number };

/** What a run is given besides its settings, new or resumed: the models and the caller's hooks. */
export type RunInputs = Pick<RunSessionOptions, 'workerModel' | 'plannerModel' | 'signal' | 'onEvent' | 'secrets' | 'bisectParallel'>;

export interface DriveRunOptions {
  readonly options: RunInputs;
  readonly session: Extract<PreparedSession, { ok: true }>;
  readonly chosen: Extract<ChosenWorkspaces, { ok: true }>;
  readonly stores: RunStores;
  readonly start: RunStart;
  readonly runId: string;
  readonly commands: CommandRunners;
  readonly late: LateRecorder;
  /** The run's prompts, loaded before anything ran (see `loadPromptSet`). */
  readonly prompts: PromptSet;
}

/** The run itself, new or resumed: workspaces, the runner until the root closes, the check, the checkout. */
export async function driveRun(drive: DriveRunOptions): Promise<RunSessionResult> {
  const { options, session, chosen, start, runId, commands, late, prompts } = drive;
  const { events, tasks } = drive.stores;
  const { repo, stateDir } = session;
  const startCommit = await resolveBranch(repo, repo.mainBranch);
  // The checkout follows a trunk the user has checked out; every trunk is watched for moves by others.
  let recordTrunk: (body: EventBody) => void = () => undefined;
  const trunkKeeper = await startTrunkKeeper({ repo, startCommit, earlier: await landingsOf(drive.stores.events, runId), record: (body) => recordTrunk(body) });
  // Other hosts land on the origin: the trunk here follows it, and the checkout with it.
  const follower = startOriginFollower({ repo, moved: (landing) => trunkKeeper.landed(landing), problem: (body) => recordTrunk(body) });
  // With other hosts on the run, the budget also folds what they spend, read from the store.
  let budgetFollower: BudgetFollower | null = null;
  // A run whose store's run lock is lost stops as Ctrl-C stops it: resumable, its tasks released.
  const signal = options.signal === undefined ? session.lockLost : AbortSignal.any([options.signal, session.lockLost]);
  try {
    // The budget folds every event of the run as it is recorded, before anyone else hears of it,
    // and records its own through the run's system recorder.
    let recordBudget: (body: EventBody) => void = () => undefined;
    const limits = start.settings.limits;
    const budget = createRunBudget(limits, start.startedAt, (body) => recordBudget(body));
    // The green loop counts landings from the moment it starts.
    let observeGreen: (event: RecordedEvent) => void = () => undefined;
    const onEvent = (event: RecordedEvent): void => {
      if (event.type === 'merge.landed') trunkKeeper.landed(event.data);
      budget?.observe(event);
      budgetFollower?.own(event);
      observeGreen(event);
      options.onEvent?.(event);
    };
    const system = createAgentRecorder(events, runId, 'system', onEvent);
    recordTrunk = system.record;
    const disk = createDiskGuard({ events, path: stateDir, ...(session.state.storeUrl === undefined ? { logPath: eventsDatabasePath(stateDir) } : {}), record: system.record, now: Date.now });
    let resumed: ResumedRun | null = null;
    let rootTaskId: string;
    if (start.kind === 'new') {
      recordBudget = system.record;
      system.record({ type: 'run.started', data: { mode: 'run', repo: repo.root, model: options.workerModel.spec, title: start.goal.title, trunk: trunkRecord(repo, start.trunk, originShown(repo, session.state.storeUrl)) } });
      system.record({ type: 'run.configured', data: { settings: start.settings } });
      if (budget !== undefined) system.record({ type: 'budget.set', data: budgetSet(limits, start.startedAt) });
      // With the run's start, before the first flush: a run killed at any later moment has its root to resume.
      rootTaskId = await createRootTask(tasks, system, runId, start);
    } else {
      resumed = await takeUpRun({ events, tasks, repo, runId, unfinished: start.unfinished, record: system.record, now: Date.now });
      rootTaskId = resumed.rootTaskId;
      // What the run spent before (the repaired log included) is counted again, quietly: its warnings were recorded then.
      for (const event of await events.read({ runId, types: BUDGET_EVENT_TYPES })) budget?.observe(event);
      recordBudget = system.record;
    }
    system.record({ type: 'prompts.loaded', data: { overridden: prompts.overridden.map((override) => ({ ...override })) } });
    late.attach(system.record);
    // The install below can take minutes; the run's start is on disk before it.
    await disk.flush(signal);
    if (budget !== undefined && session.state.storeUrl !== undefined) budgetFollower = followRunBudget({ events, runId, ledger: budget, afterSeq: await events.lastSeq() });
    const dependencies = await prepareSharedDependencies({
      repo,
      commit: startCommit,
      stateDir,
      enabled: start.settings.sharedDependencies,
      setup: start.settings.setup,
      runInstall: sandboxedInstall(commands),
      record: system.record,
      signal,
    });
    if (!dependencies.ok) {
      await trunkKeeper.finish();
      // No agent ran. Stopped by the user, the run stays resumable. Failed, a new run leaves no
      // branch behind and ends failed (the next `colony run` starts afresh from the fixed
      // commit); a resumed one stays resumable.
      const failed = start.kind === 'new' && !signal.aborted;
      if (failed) await dropUnusedTrunk(start.trunk);
      system.record({ type: 'run.ended', data: { status: failed ? 'failed' : 'stopped', durationMs: Date.now() - start.startedAt } });
      await system.flush();
      if (signal.aborted) return { ok: false, failed: true, error: 'the run was stopped during its setup, before any agent started; colony resume goes on with it.' };
      return { ok: false, failed: true, error: `the setup failed before any agent started: ${dependencies.error}${refusedBySetup(await events.read({ runId, types: ['network.requested'] }))}\nTo fix it: ${dependencies.fix}.` };
    }
    const dependencyLayers = dependencies.layers;
    const diskCapBytes = start.settings.workspaceDiskCapBytes ?? (await defaultDiskCapBytes(stateDir));
    const workspaces = await startWorkspaces({
      repo,
      stateDir,
      lock: session.stateLock,
      chosen,
      record: system.record,
      diskCapBytes,
      ...(resumed === null ? {} : { keep: resumed.keepWorkspaces }),
    });
    if (!workspaces.ok) {
      await trunkKeeper.finish();
      // Nothing ran: the run stays resumable once what kept the workspaces from starting is fixed.
      system.record({ type: 'run.ended', data: { status: 'stopped', durationMs: Date.now() - start.startedAt } });
      await system.flush();
      return workspaces;
    }
    const wakeups = new Wakeups();
    // Messages, the user's andon and the goal file, while the run goes (`colony say`, `colony andon`, an edited goal).
    // The worker limit the user set last (`colony workers`) outlasts a restart.
    const controls = createRunControls(await workerLimitFromLog(events, runId, start.settings.workers));
    const steering = await startSteering({ events, tasks, runId, rootTaskId, goalPath: start.settings.goalPath, record: system.record, wakeups, secrets: options.secrets ?? [], now: Date.now, effects: controls.effects });
    const viewsDir = viewsDirOf(stateDir);
    // Planners' and snapshots' views left by a process that died with them; nothing of this state runs yet.
    await removeLeftoverViews(repo, viewsDir);
    const green = await startGreenLoop({
      runId,
      repo,
      events,
      tasks,
      rootTaskId,
      viewsDir,
      commands,
      dependencyLayers,
      prompts,
      settings: start.settings.green,
      record: system.record,
      flush: system.flush,
      goal: () => goalAsItStands(events, tasks, runId, rootTaskId),
      base: resumed === null ? startCommit : await runGreenBase(events, runId, startCommit),
      parallel: options.bisectParallel ?? defaultBisectParallel(),
      wakeups,
      now: Date.now,
      signal,
    });
    let outcome: Awaited<ReturnType<typeof runTasks>>;
    let release: ReleaseVerdict | null = null;
    try {
      observeGreen = (event) => green.observe(event);
      controls.attachGreen(() => green.request());
      const context: RunContext = {
        runId,
        repo,
        events,
        tasks,
        wakeups,
        steering: steering.writer,
        dependencyLayers,
        settleConflicts: dependencies.settleConflicts,
        workspaces: workspaces.provider,
        workspaceQuota: workspaces.quota ?? undefined,
        workspacesDir: workspacesDirOf(stateDir),
        viewsDir,
        workerModel: options.workerModel,
        plannerModel: options.plannerModel,
        settings: start.settings,
        prompts,
        commands,
        now: Date.now,
        workInFlight: createWorkInFlight(events, runId),
        mainHealth: createMainHealth(events, runId),
        budget,
        onEvent,
        disk,
        priorAgents: resumed?.priorAgents,
        green,
      };
      outcome = await runTasks({
        context,
        holder: newShortId('runner'),
        workers: controls.workers,
        userStops: controls.stops,
        leaseMs: start.settings.leaseMs,
        rootTaskId,
        signal,
      }).finally(() => steering.stop());
      // The release snapshot: the one a done finish waited for, or taken now on main as the run leaves it.
      if (outcome.rootHandoff !== null) release = await green.release().catch((error: unknown) => uncheckedRelease(error));
    } finally {
      await green.stop();
    }

    let check: MainCheck | null = null;
    // colony's own failure (its store) stops the run like Ctrl-C does: tasks released, resumable;
    // so does a stop that came during the release, which then gave no verdict.
    let status: RunEndStatus = 'stopped';
    if (outcome.rootHandoff !== null && release !== null && !release.stopped) {
      check = await recordMainCheck(system, release);
      status = outcome.rootHandoff.status === 'done' && release.passed ? 'done' : 'failed';
    }
    const budgetExhausted = budget?.runExhaustion() ?? null;
    // The tree wound down because a limit was used up; a goal met all the same is still done.
    if (budgetExhausted !== null && outcome.rootHandoff !== null && status !== 'done') status = 'budget-exhausted';
    // A run that ended for good is not resumed: workspaces its stopped workers kept for a resume
    // are salvaged and removed now (their overlays unmounted), not left for the next run.
    if (status !== 'stopped') {
      await sweepWorkspaces({ repo, stateDir, lock: session.stateLock, workspacesDir: workspacesDirOf(stateDir), providers: [workspaces.provider], record: system.record });
    }
    await follower?.stop();
    const { checkoutProblem, trunkProblem } = await trunkKeeper.finish();
    const mainCommit = await resolveBranch(repo, repo.mainBranch);
    // A run that ended having landed nothing leaves no empty branch of its own behind.
    if (status !== 'stopped' && start.kind === 'new') await dropUnusedTrunk(start.trunk);
    // Nothing is left to share once every worker has ended: no hidden copy of the repository
    // stays behind (what workspaces kept for `colony resume` still need is kept).
    await workspaces.provider.close();
    // One wall time for the run, from its first start: what the log records is what the summary prints.
    const durationMs = Date.now() - start.startedAt;
    system.record({ type: 'run.ended', data: { status, durationMs } });
    await disk.flush();
    return {
      ok: true,
      runId,
      status,
      budgetExhausted,
      rootHandoff: outcome.rootHandoff,
      check,
      mainBranch: repo.mainBranch,
      checkedOutBranch: repo.checkedOutBranch,
      startCommit,
      mainCommit,
      stateDir,
      checkoutProblem,
      trunkProblem,
      failure: outcome.failure ?? lockLostReason(session.lockLost),
      durationMs,
      workspaceMethod: workspaces.provider.method,
      sandboxMethod: commands.method,
    };
  } finally {
    await follower?.stop();
    await budgetFollower?.stop();
    await closeRepositoryObjects(repo);
  }
}

/** The check run on main at the end of a run: the release snapshot's command, commit and verdict. */
export interface MainCheck {
  readonly command: string;
  readonly commit: string;
  readonly passed: boolean;
}

/** A release that threw (git failed under it): not passed, with the reason. */
function uncheckedRelease(error: unknown): ReleaseVerdict {
  return { passed: false, stopped: false, check: null, refusal: `colony could not take the release snapshot: ${errorMessage(error)}` };
}

/** The release snapshot, recorded also as the run's `main.checked`; null when no check ran. */
async function recordMainCheck(system: EventStoreRecorder, release: ReleaseVerdict): Promise<MainCheck | null> {
  const checked = release.check;
  if (checked === null) return null;
  const { command, commit, passed, exitCode, timedOut, outputTail } = checked;
  system.record({ type: 'main.checked', data: { command, commit, passed, exitCode, timedOut, durationMs: Math.round(checked.durationMs), outputTail } });
  await system.flush();
  return { command, commit, passed };
}

async function createRootTask(tasks: TaskStore, system: EventStoreRecorder, runId: string, start: RunStart): Promise<string> {
  if (start.kind !== 'new') throw new Error('only a new run creates its root task');
  const created = await tasks.createTask(
    { id: newShortId('task'), runId, parentTaskId: null, createdBy: null, kind: 'planner', title: start.goal.title, body: start.goal.body, scope: null, retryOf: null },
    Date.now(),
  );
  if (!created.ok) throw new Error(`the root task could not be created: ${created.error}`);
  const root = created.task;
  system.record({ type: 'task.created', data: { taskId: root.id, parentTaskId: null, kind: 'planner', title: root.title, scope: null, retryOf: null } });
  return root.id;
}

/** The settings a new run records for `colony resume`: the options' with the defaults filled in, the goal file it keeps and its trunk. */
function settingsOf(options: RunSessionOptions, goal: Pick<RunSettings, 'goalPath' | 'goalSource'>, repo: Repository): RunSettings {
  // An inline goal's text is not a setting: it is the root task's brief (the schema drops it).
  const given = options.settings;
  const green = { ...given.green, branch: given.green?.branch ?? defaultGreenBranch(repo) };
  return resolveRunSettings({ ...given, ...goal, trunk: repo.mainBranch, green, workerModel: options.workerModel.spec, plannerModel: options.plannerModel.spec });
}

/** Why the store's run lock was lost, when it was. */
function lockLostReason(lockLost: AbortSignal): string | null {
  if (!lockLost.aborted) return null;
  return lockLost.reason instanceof Error ? lockLost.reason.message : String(lockLost.reason);
}
