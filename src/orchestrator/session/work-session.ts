import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import type { Handoff } from '../../events/handoff.js';
import { newShortId } from '../../events/ids.js';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createRedactingEventStore } from '../../store/events/redacting-event-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { runGit } from '../../workspace/git/git.js';
import type { WorkspaceMethodChoice } from '../../workspace/workspace-method-choice.js';
import type { WorkspaceMethod } from '../../workspace/workspace.js';
import { readBriefFile } from './brief-file.js';
import { createRedactingChatModel } from './redacting-chat-model.js';
import { startCheckoutSync } from '../setup/checkout-sync.js';
import { runWorkerTask } from '../roles/worker/run-worker-task.js';
import { loadPromptSet, type PromptSet } from '../prompts/prompt-set.js';
import { dirtyCheckoutProblem, prepareSession, type PreparedSession } from './session-prelude.js';
import { chooseTrunk, dropUnusedTrunk, makeTrunk, type ChosenTrunk } from '../../workspace/checkout/trunk-branch.js';
import { trunkRecord } from './trunk-record.js';
import { landsOnCheckout, onTrunk } from '../../workspace/git/repository.js';
import { prepareSharedDependencies, refusedBySetup } from '../setup/shared-dependencies.js';
import type { SetupCommand } from '../../workspace/dependencies/setup-command-inputs.js';
import { sandboxedInstall } from '../setup/sandboxed-install.js';
import { eventsDatabasePath, viewsDirOf, workspacesDirOf } from '../setup/state-directory.js';
import type { SalvagedWork } from '../setup/workspace-reclaim.js';
import { chooseWorkspaces, startWorkspaces, type ChosenWorkspaces } from '../setup/workspace-setup.js';
import type { CommandRunners, LateRecorder } from '../setup/command-sandbox.js';
import { withSessionCommands } from './session-commands.js';
import { errorMessage } from '../../errors/error-message.js';
import { DEFAULT_FRESHNESS, type SandboxSettings } from '../../events/run-settings.js';

export { defaultStateDir, eventsDatabasePath } from '../setup/state-directory.js';

export interface WorkSessionOptions {
  readonly repoDir: string;
  readonly taskPath: string;
  readonly model: ChatModel;
  /** Defaults to `defaultStateDir(repoDir)`. */
  readonly stateDir?: string;
  readonly maxSteps: number;
  /** The branch the work lands on (`--trunk`); a branch of its own, `colony/<short task name>`, when absent. */
  readonly trunk?: string | undefined;
  /** Install main's npm dependencies once and link them into the worker's workspace; true when not given. */
  readonly sharedDependencies?: boolean;
  /** The project's own setup, in place of npm's install; none when absent. */
  readonly setup?: SetupCommand | null;
  /** How the workspace is made; `auto` (the default) takes an overlay mount where it works. */
  readonly workspaces?: WorkspaceMethodChoice;
  /** How the worker's commands are confined; bubblewrap with no network when absent. */
  readonly sandbox?: SandboxSettings;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RecordedEvent) => void;
  /** Values that must never be recorded, as for `colony run` (see `RunSessionOptions.secrets`). */
  readonly secrets?: readonly string[];
}

export type WorkSessionResult =
  /** Refused before it started; `failed` when it started and could not go on (its setup failed). */
  | { readonly ok: false; readonly error: string; readonly failed?: true }
  | {
      readonly ok: true;
      readonly runId: string;
      readonly handoff: Handoff;
      /** The trunk: the branch the work landed on. */
      readonly mainBranch: string;
      /** The branch checked out in the user's checkout; the trunk itself when the work landed there. */
      readonly checkedOutBranch: string;
      readonly startCommit: string;
      readonly mainCommit: string;
      readonly stateDir: string;
      /** Why the user's checkout could not be brought up to date, or null when it was. */
      readonly checkoutProblem: string | null;
      readonly keptWorkspace: string | null;
      /** What was saved of work that did not land before the workspace was removed, or null. */
      readonly salvaged: SalvagedWork | null;
      readonly workspaceMethod: WorkspaceMethod;
    };

/**
 * `colony work`: one worker on one task in a repository, from the checks up front to the
 * user's checkout brought up to date. Problems with the input come back as `{ ok: false }`
 * before anything is changed.
 */
export async function runWorkSession(given: WorkSessionOptions): Promise<WorkSessionResult> {
  const options: WorkSessionOptions = { ...given, model: createRedactingChatModel(given.model, createSecretRedactor(given.secrets ?? [])) };
  const task = readBriefFile(options.taskPath, 'task');
  if (!task.ok) return task;
  const session = await prepareSession(options.repoDir, options.stateDir);
  if (!session.ok) return session;
  try {
    const loaded = loadPromptSet(session.repo.root);
    if (!loaded.ok) return loaded;
    const givenTrunk = options.trunk ?? null;
    const dirty = givenTrunk === null ? null : await dirtyCheckoutProblem(onTrunk(session.repo, givenTrunk));
    if (dirty !== null) return { ok: false, error: dirty };
    const trunk = await chooseTrunk(session.repo, givenTrunk, task.title);
    if (!trunk.ok) return trunk;
    const chosen = await chooseWorkspaces(trunk.chosen.repo, session.stateDir, options.workspaces ?? 'auto');
    if (!chosen.ok) return chosen;
    // The last step that may refuse, and the first that changes the repository.
    const made = await makeTrunk(trunk.chosen);
    if (!made.ok) return made;
    const onItsTrunk = { ...session, repo: trunk.chosen.repo };
    return await withSessionCommands(onItsTrunk, options.sandbox, ({ runId, commands, late }) =>
      runInRepository(options, onItsTrunk, chosen, trunk.chosen, task, loaded.prompts, runId, commands, late),
    );
  } finally {
    await session.release();
  }
}

async function runInRepository(
  options: WorkSessionOptions,
  session: Extract<PreparedSession, { ok: true }>,
  chosen: Extract<ChosenWorkspaces, { ok: true }>,
  trunk: ChosenTrunk,
  task: { title: string; body: string },
  prompts: PromptSet,
  runId: string,
  commands: CommandRunners,
  late: LateRecorder,
): Promise<WorkSessionResult> {
  const { repo, stateDir } = session;
  const startCommit = (await runGit(repo.root, ['rev-parse', `refs/heads/${repo.mainBranch}`])).stdout.trim();
  let events: EventStore;
  try {
    events = createRedactingEventStore(openSqliteEventStore(eventsDatabasePath(stateDir)), createSecretRedactor(options.secrets ?? []));
  } catch (error) {
    return { ok: false, error: `cannot open the event log: ${errorMessage(error)}` };
  }
  // The user's checkout follows only a trunk they have checked out.
  const checkout = landsOnCheckout(repo) ? startCheckoutSync(repo, startCommit) : null;
  const started = Date.now();
  // A forced quit (process.exit) still writes the events recorded in its last moments: the
  // SQLite store writes them before its promise settles. An exit handler cannot wait for it,
  // so a failure there has nobody left to tell.
  const closeOnExit = (): void => {
    events.close().catch(() => undefined);
  };
  process.once('exit', closeOnExit);
  try {
    const record = (body: EventBody) => {
      const event = events.append({ ...body, runId, agentId: 'system' });
      options.onEvent?.(event);
    };
    record({ type: 'run.started', data: { mode: 'work', repo: repo.root, model: options.model.spec, title: task.title, trunk: trunkRecord(repo, trunk) } });
    record({ type: 'prompts.loaded', data: { overridden: prompts.overridden.map((override) => ({ ...override })) } });
    late.attach(record);
    const dependencies = await prepareSharedDependencies({
      repo,
      commit: startCommit,
      stateDir,
      enabled: options.sharedDependencies !== false,
      setup: options.setup ?? null,
      runInstall: sandboxedInstall(commands),
      record,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (!dependencies.ok) {
      await checkout?.finish();
      record({ type: 'run.ended', data: { status: 'failed', durationMs: Date.now() - started } });
      await dropUnusedTrunk(trunk);
      return { ok: false, failed: true, error: `the setup failed before the worker started: ${dependencies.error}${refusedBySetup(await events.read({ runId, types: ['network.requested'] }))}\nTo fix it: ${dependencies.fix}.` };
    }
    const dependencyLayers = dependencies.layers;
    // One worker, one workspace: a disk cap would have nothing to hold back.
    const workspaces = await startWorkspaces({ repo, stateDir, lock: session.stateLock, chosen, record, diskCapBytes: null });
    if (!workspaces.ok) {
      await checkout?.finish();
      record({ type: 'run.ended', data: { status: 'failed', durationMs: Date.now() - started } });
      return workspaces;
    }
    const result = await runWorkerTask(
      {
        repo,
        events,
        runId,
        workerModel: options.model,
        dependencyLayers,
        settleConflicts: dependencies.settleConflicts,
        workspaces: workspaces.provider,
        workspacesDir: workspacesDirOf(stateDir),
        viewsDir: viewsDirOf(stateDir),
        prompts,
        commands,
        onEvent: options.onEvent,
        // `colony work` takes no merge check, freshness or caching flags: its worker has the defaults.
        settings: { workerMaxSteps: options.maxSteps, mergeCheck: null, freshness: DEFAULT_FRESHNESS, promptCache: true },
      },
      {
        task: { id: newShortId('task'), title: task.title, body: task.body },
        onLanded: () => checkout?.afterLanding() ?? Promise.resolve(),
        signal: options.signal,
      },
    );
    const checkoutProblem = (await checkout?.finish()) ?? null;
    await workspaces.provider.close();
    record({ type: 'run.ended', data: { status: result.handoff.status, durationMs: Date.now() - started } });
    const mainCommit = (await runGit(repo.root, ['rev-parse', `refs/heads/${repo.mainBranch}`])).stdout.trim();
    await dropUnusedTrunk(trunk);
    return {
      ok: true,
      runId,
      handoff: result.handoff,
      mainBranch: repo.mainBranch,
      checkedOutBranch: repo.checkedOutBranch,
      startCommit,
      mainCommit,
      stateDir,
      checkoutProblem,
      keptWorkspace: result.keptWorkspace,
      salvaged: result.salvaged,
      workspaceMethod: workspaces.provider.method,
    };
  } finally {
    process.off('exit', closeOnExit);
    await closeRepositoryObjects(repo);
    await events.close();
  }
}
