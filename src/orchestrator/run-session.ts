import { closeRepositoryObjects } from '../workspace/repository-objects.js';
import { join } from 'node:path';
import type { ColonyEvent, EventBody, EventData } from '../events/event-types.js';
import type { Handoff } from '../events/handoff.js';
import { newShortId } from '../events/ids.js';
import { createSecretRedactor } from '../events/secret-redaction.js';
import type { ChatModel } from '../model/chat-model.js';
import type { EventStore } from '../store/event-store.js';
import { createRedactingEventStore } from '../store/redacting-event-store.js';
import { createRedactingTaskStore } from '../store/redacting-task-store.js';
import { openSqliteEventStore } from '../store/sqlite-event-store.js';
import { openSqliteTaskStore } from '../store/sqlite-task-store.js';
import type { TaskStore } from '../store/task-store.js';
import { resolveBranch } from '../workspace/workspace.js';
import type { WorkspaceMethodChoice } from '../workspace/choose-workspace-provider.js';
import type { WorkspaceMethod } from '../workspace/workspace.js';
import { createAgentRecorder } from './agent-recorder.js';
import { createBudgetLedger, type BudgetLedger, type Exhaustion, type RunLimits } from './budget-ledger.js';
import { readBriefFile } from './brief-file.js';
import { createRedactingChatModel } from './redacting-chat-model.js';
import { startCheckoutSync } from './checkout-sync.js';
import { checkMain, type MainCheck } from './main-check.js';
import type { RunContext } from './run-context.js';
import { createWorkInFlight } from './work-in-flight.js';
import { prepareSession, type PreparedSession } from './session-prelude.js';
import { prepareSharedDependencies } from './shared-dependencies.js';
import { sandboxedInstall } from './sandboxed-install.js';
import { eventsDatabasePath, workspacesDirOf } from './state-directory.js';
import { runTasks } from './task-runner.js';
import { Wakeups } from './wakeups.js';
import { chooseWorkspaces, defaultDiskCapBytes, startWorkspaces, type ChosenWorkspaces } from './workspace-setup.js';
import type { CommandRunners, LateRecorder, SandboxSettings } from './command-sandbox.js';
import { withSessionCommands } from './session-commands.js';

export interface RunSessionOptions {
  readonly repoDir: string;
  readonly goalPath: string;
  readonly workerModel: ChatModel;
  readonly plannerModel: ChatModel;
  readonly workers: number;
  /** Defaults to `<repo>/.colony`. */
  readonly stateDir?: string;
  readonly workerMaxSteps: number;
  readonly plannerMaxSteps: number;
  /** A command every worker's merge must pass on its work replayed onto main; none when absent. */
  readonly mergeCheck?: string;
  /** How long a lease lasts without a heartbeat. */
  readonly leaseMs?: number;
  /** Install the trunk's npm dependencies once and link them into every worker's workspace; true when not given. */
  readonly sharedDependencies?: boolean;
  /** How workspaces are made; `auto` (the default) takes overlay mounts where they work. */
  readonly workspaces?: WorkspaceMethodChoice;
  /** The most disk all workspaces may take together; default a fifth of the free space at the start. */
  readonly workspaceDiskCapBytes?: number;
  /** The run's spending and time limits (`--budget-tokens`, `--budget-usd`, `--max-hours`); none when absent. */
  readonly limits?: RunLimits;
  /** How agents' commands are confined; bubblewrap with no network when absent. */
  readonly sandbox?: SandboxSettings;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: ColonyEvent) => void;
  /**
   * Values that must never be recorded (the API keys in colony's environment, see
   * `secretsInEnvironment`): replaced in every event, task and handoff, and in the models'
   * error messages. Credentials in URLs are replaced whether listed or not.
   */
  readonly secrets?: readonly string[];
}

export type RunSessionResult =
  | { readonly ok: false; readonly error: string }
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
      readonly trunk: string;
      readonly trunkCommit: string;
      readonly stateDir: string;
      readonly checkoutProblem: string | null;
      /** Why colony stopped the run itself (its store failed), or null. */
      readonly failure: string | null;
      readonly durationMs: number;
      readonly workspaceMethod: WorkspaceMethod;
      readonly sandboxMethod: CommandRunners['method'];
    };

export type RunEndStatus = 'done' | 'failed' | 'stopped' | 'budget-exhausted';

const DEFAULT_LEASE_MS = 30_000;

/**
 * `colony run`: a tree of agents builds a goal in a repository. The root planner's task goes
 * into the store, a runner claims and runs tasks until the root planner finishes, the project's
 * check runs on main, and the user's checkout (untouched while the run goes) is brought up to
 * the trunk at the end. Problems with the input come back as `{ ok: false }` before anything changes.
 */
export async function runRunSession(given: RunSessionOptions): Promise<RunSessionResult> {
  const redactor = createSecretRedactor(given.secrets ?? []);
  const workerModel = createRedactingChatModel(given.workerModel, redactor);
  const plannerModel = given.plannerModel === given.workerModel ? workerModel : createRedactingChatModel(given.plannerModel, redactor);
  const options: RunSessionOptions = { ...given, workerModel, plannerModel };
  const goal = readBriefFile(options.goalPath, 'goal');
  if (!goal.ok) return goal;
  const session = await prepareSession(options.repoDir, options.stateDir);
  if (!session.ok) return session;
  try {
    const chosen = await chooseWorkspaces(session.repo, session.stateDir, options.workspaces ?? 'auto');
    if (!chosen.ok) return chosen;
    return await withSessionCommands(session, options.sandbox, ({ runId, commands, late }) =>
      runInRepository(options, session, chosen, goal, runId, commands, late),
    );
  } finally {
    session.release();
  }
}

async function runInRepository(
  options: RunSessionOptions,
  session: Extract<PreparedSession, { ok: true }>,
  chosen: Extract<ChosenWorkspaces, { ok: true }>,
  goal: { title: string; body: string },
  runId: string,
  commands: CommandRunners,
  late: LateRecorder,
): Promise<RunSessionResult> {
  const { repo, stateDir } = session;
  const startCommit = await resolveBranch(repo, repo.trunk);
  let events: EventStore;
  let tasks: TaskStore;
  try {
    events = createRedactingEventStore(openSqliteEventStore(eventsDatabasePath(stateDir)), createSecretRedactor(options.secrets ?? []));
  } catch (error) {
    return { ok: false, error: `cannot open the event log: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    tasks = createRedactingTaskStore(openSqliteTaskStore(eventsDatabasePath(stateDir)), createSecretRedactor(options.secrets ?? []));
  } catch (error) {
    events.close();
    return { ok: false, error: `cannot open the task store: ${error instanceof Error ? error.message : String(error)}` };
  }
  const checkout = startCheckoutSync(repo, startCommit);
  const started = Date.now();
  const signal = options.signal ?? new AbortController().signal;
  // A forced quit (process.exit) still writes the events recorded in its last moments.
  const closeOnExit = () => events.close();
  process.once('exit', closeOnExit);
  try {
    // The budget folds every event of the run as it is recorded, before anyone else hears of it,
    // and records its own through the run's system recorder.
    const budget = createRunBudget(options.limits, started, (body) => system.record(body));
    const onEvent = (event: ColonyEvent): void => {
      budget?.observe(event);
      options.onEvent?.(event);
    };
    const system = createAgentRecorder(events, runId, 'system', onEvent);
    system.record({ type: 'run.started', data: { mode: 'run', repo: repo.root, model: options.workerModel.spec, title: goal.title } });
    if (budget !== undefined && options.limits !== undefined) system.record({ type: 'budget.set', data: budgetSet(options.limits, started) });
    late.attach(system.record);
    // The install below can take minutes; the run's start is on disk before it.
    system.flush();
    const dependencyLayer = await prepareSharedDependencies({
      repo,
      commit: startCommit,
      stateDir,
      enabled: options.sharedDependencies !== false,
      runInstall: sandboxedInstall(commands),
      record: system.record,
      signal,
    });
    const diskCapBytes = options.workspaceDiskCapBytes ?? (await defaultDiskCapBytes(stateDir));
    const workspaces = await startWorkspaces({ repo, stateDir, lock: session.stateLock, chosen, record: system.record, diskCapBytes });
    if (!workspaces.ok) {
      await checkout.finish();
      system.record({ type: 'run.ended', data: { status: 'failed', durationMs: Date.now() - started } });
      system.flush();
      return workspaces;
    }
    const context: RunContext = {
      runId,
      repo,
      events,
      tasks,
      wakeups: new Wakeups(),
      dependencyLayer,
      workspaces: workspaces.provider,
      ...(workspaces.quota === null ? {} : { workspaceQuota: workspaces.quota }),
      workspacesDir: workspacesDirOf(stateDir),
      viewsDir: join(stateDir, 'views'),
      workerModel: options.workerModel,
      plannerModel: options.plannerModel,
      workerMaxSteps: options.workerMaxSteps,
      plannerMaxSteps: options.plannerMaxSteps,
      mergeCheck: options.mergeCheck ?? null,
      commands,
      now: Date.now,
      workInFlight: createWorkInFlight(events, runId),
      ...(budget === undefined ? {} : { budget }),
      onEvent,
    };
    const created = tasks.createTask(
      { id: newShortId('task'), runId, parentTaskId: null, createdBy: null, kind: 'planner', title: goal.title, body: goal.body, scope: null, retryOf: null },
      Date.now(),
    );
    // A root task has no publisher whose generation could be stale, so only a bug refuses it.
    if (!created.ok) throw new Error(created.reason);
    const root = created.task;
    system.record({ type: 'task.created', data: { taskId: root.id, parentTaskId: null, kind: 'planner', title: root.title, scope: null, retryOf: null } });
    system.flush();

    const outcome = await runTasks({
      context,
      holder: newShortId('runner'),
      workers: () => options.workers,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      rootTaskId: root.id,
      signal,
    });

    let check: MainCheck | null = null;
    let status: RunEndStatus = outcome.failure === null ? 'stopped' : 'failed';
    if (outcome.rootHandoff !== null) {
      check = await checkMain(repo, goal.body, context.viewsDir, system, signal, commands);
      status = outcome.rootHandoff.status === 'done' && (check === null || check.passed) ? 'done' : 'failed';
    }
    const budgetExhausted = budget?.runExhaustion() ?? null;
    // The tree wound down because a limit was used up; a goal met all the same is still done.
    if (budgetExhausted !== null && outcome.rootHandoff !== null && status !== 'done') status = 'budget-exhausted';
    const checkoutProblem = await checkout.finish();
    // Nothing is left to share once every worker has ended: no hidden copy of the repository stays behind.
    await workspaces.provider.close();
    const durationMs = Date.now() - started;
    system.record({ type: 'run.ended', data: { status, durationMs } });
    system.flush();
    return {
      ok: true,
      runId,
      status,
      budgetExhausted,
      rootHandoff: outcome.rootHandoff,
      check,
      trunk: repo.trunk,
      trunkCommit: await resolveBranch(repo, repo.trunk),
      stateDir,
      checkoutProblem,
      failure: outcome.failure,
      durationMs,
      workspaceMethod: workspaces.provider.method,
      sandboxMethod: commands.method,
    };
  } finally {
    process.off('exit', closeOnExit);
    await closeRepositoryObjects(repo);
    tasks.close();
    events.close();
  }
}

/** The run's budget ledger; none when no limit was set. */
function createRunBudget(limits: RunLimits | undefined, startedAt: number, record: (body: EventBody) => void): BudgetLedger | undefined {
  if (limits === undefined || (limits.tokens === null && limits.usd === null && limits.maxHours === null)) return undefined;
  return createBudgetLedger({ limits, startedAt, now: Date.now, record });
}

function budgetSet(limits: RunLimits, startedAt: number): EventData<'budget.set'> {
  const deadline = limits.maxHours === null ? null : startedAt + limits.maxHours * 3_600_000;
  return { tokens: limits.tokens, usd: limits.usd, maxHours: limits.maxHours, deadline };
}
