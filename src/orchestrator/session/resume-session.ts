import { resolve } from 'node:path';
import type { ColonyEvent, RecordedEvent } from '../../events/event-types.js';
import type { RunSettings } from '../../events/run-settings.js';
import { createSecretRedactor, REDACTED } from '../../events/secret-redaction.js';
import type { ChatModel } from '../../model/chat-model.js';
import { onTrunk, openRepository, type Repository } from '../../workspace/git/repository.js';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import { COLONY_REFLOG_PREFIX, fetchOriginTrunk, trunkOriginOf, withOrigin, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';
import { readRef } from '../../workspace/workspace.js';
import type { EventStore } from '../../store/events/event-store.js';
import { recordedOriginOf } from './trunk-record.js';
import { createRedactingChatModel } from './redacting-chat-model.js';
import { describeUnfinishedRun, findUnfinishedRun, type UnfinishedRun } from '../setup/run-history.js';
import { driveRun, type RunInputs, type RunSessionResult } from './run-session.js';
import { openRunStores } from '../setup/run-stores.js';
import { loadPromptSet } from '../prompts/prompt-set.js';
import { dirtyCheckoutProblem, prepareSession } from './session-prelude.js';
import { recordedTrunk } from '../../workspace/checkout/trunk-branch.js';
import { withSessionCommands } from './session-commands.js';
import { describeRunState, mayHoldRuns, runStateAt, type RunState } from '../setup/run-state.js';
import { defaultStateDir } from '../setup/state-directory.js';
import { chooseWorkspaces } from '../setup/workspace-setup.js';
import { shellWord } from '../../errors/shell-word.js';

export interface ResumeSessionOptions {
  readonly repoDir: string;
  /** Defaults to `defaultStateDir(repoDir)`. */
  readonly stateDir?: string;
  /** The PostgreSQL store the run's log is in, when it is not in the state directory. */
  readonly storeUrl?: string;
  /** The origin the run lands on, as given again (`--origin`, with its password); the one it recorded when absent. */
  readonly origin?: TrunkOrigin;
  /** The models the run's settings name, resolved by the caller (see `readUnfinishedRun`). */
  readonly workerModel: ChatModel;
  readonly plannerModel: ChatModel;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RecordedEvent) => void;
  /** Values that must never be recorded, as for `colony run`. */
  readonly secrets?: readonly string[];
}

export type ResumableRun = UnfinishedRun & { readonly settings: RunSettings };

export type ReadUnfinishedResult = { readonly ok: true; readonly run: ResumableRun; readonly stateDir: string } | { readonly ok: false; readonly error: string };

/**
 * The run `colony resume` would take up in a repository's state directory, read without
 * taking its locks, so the caller can resolve the models it names first. Refuses a state
 * directory without a log, one whose last run ended, and a run recorded without its settings.
 */
export async function readUnfinishedRun(repoDir: string, stateDirOption: string | undefined, storeUrl?: string): Promise<ReadUnfinishedResult> {
  const opened = await openRepository(repoDir);
  if (!opened.ok) return opened;
  const stateDir = resolve(stateDirOption ?? defaultStateDir(opened.repo.root));
  const state = runStateAt(stateDir, storeUrl);
  if (!mayHoldRuns(state)) {
    return { ok: false, error: `there is no run to resume: ${stateDir} holds no colony log. Start one with \`colony run GOAL.md\`${stateDirOption === undefined ? '' : ` --state ${shellWord(stateDir)}`}.` };
  }
  const stores = await openRunStores(state, []);
  if (!stores.ok) return stores;
  try {
    return checkResumable(await findUnfinishedRun(stores.events), state);
  } finally {
    await stores.close();
  }
}

function checkResumable(run: UnfinishedRun | null, state: RunState): ReadUnfinishedResult {
  const { stateDir } = state;
  if (run === null) {
    return { ok: false, error: `there is no run to resume in ${describeRunState(state)}: its last run ended (\`colony status\` shows how). Start a new one with \`colony run GOAL.md\`.` };
  }
  if (run.settings === null) {
    return {
      ok: false,
      error: `the unfinished run ${describeUnfinishedRun(run)} was recorded by an older colony that did not keep its settings, so it cannot be resumed. Start over with \`colony run GOAL.md --new\`.`,
    };
  }
  // A setting that held a secret (a key in --base-url, say) was recorded redacted: resuming
  // with it would send `[redacted]` where the key was.
  const redacted = Object.entries(run.settings).filter(([, value]) => JSON.stringify(value).includes(REDACTED)).map(([name]) => name);
  if (redacted.length > 0) {
    return {
      ok: false,
      error: `the unfinished run ${describeUnfinishedRun(run)} recorded its ${redacted.join(' and ')} with a secret in it, which colony never keeps, so it cannot be resumed as it was. Start over with \`colony run GOAL.md --new\`, and pass keys through the environment (--api-key-env) rather than in the settings.`,
    };
  }
  return { ok: true, run: { ...run, settings: run.settings }, stateDir };
}

/**
 * `colony resume`: takes up the unfinished run of a state directory where it stopped, with the
 * same tree, settings and budgets. Tasks whose runner died are claimed again and go back to
 * their agents, each rebuilt from the log (see `takeUpRun`, `priorOf`).
 */
export async function runResumeSession(given: ResumeSessionOptions): Promise<RunSessionResult> {
  const redactor = createSecretRedactor(given.secrets ?? []);
  const workerModel = createRedactingChatModel(given.workerModel, redactor);
  const plannerModel = given.plannerModel === given.workerModel ? workerModel : createRedactingChatModel(given.plannerModel, redactor);
  const session = await prepareSession(given.repoDir, given.stateDir, given.storeUrl);
  if (!session.ok) return session;
  try {
    // Read again on every resume: the run goes on with the repository's prompts as they are now.
    const loaded = loadPromptSet(session.repo.root);
    if (!loaded.ok) return loaded;
    const stores = await openRunStores(session.state, given.secrets ?? []);
    if (!stores.ok) return stores;
    try {
      const resumable = checkResumable(await findUnfinishedRun(stores.events), session.state);
      if (!resumable.ok) return resumable;
      const { run } = resumable;
      // A run whose trunk lives on an origin goes on from any checkout of the project: the trunk comes from there.
      const origin = await resumedOrigin(given.origin, stores.events, run);
      if (!origin.ok) return origin;
      if (origin.origin === null && resolve(run.repo) !== session.repo.root) {
        return {
          ok: false,
          error: `the unfinished run ${describeUnfinishedRun(run)} in ${session.stateDir} works on ${run.repo}, not on ${session.repo.root}: resume it with \`colony resume --repo ${shellWord(run.repo)} --state ${shellWord(session.stateDir)}\`.`,
        };
      }
      const { settings } = run;
      if (origin.origin !== null && settings.trunk !== null) {
        const fetched = await takeTrunkFromOrigin(onTrunk(session.repo, settings.trunk), origin.origin);
        if (!fetched.ok) return fetched;
      }
      // The run goes on landing where it landed.
      const trunk = await recordedTrunk(session.repo, settings.trunk);
      if (!trunk.ok) return trunk;
      const onItsTrunk = { ...session, repo: origin.origin === null ? trunk.chosen.repo : withOrigin(trunk.chosen.repo, origin.origin) };
      const dirty = await dirtyCheckoutProblem(onItsTrunk.repo);
      if (dirty !== null) return { ok: false, error: dirty };
      // Workspaces are taken up by the method that made them.
      const method = lastMethodChosen(await stores.events.read({ runId: run.runId, types: ['workspace.method-chosen'] })) ?? settings.workspaces;
      const chosen = await chooseWorkspaces(onItsTrunk.repo, session.stateDir, method);
      if (!chosen.ok) return chosen;
      const options: RunInputs = { workerModel, plannerModel, signal: given.signal, onEvent: given.onEvent, secrets: given.secrets };
      return await withSessionCommands(
        onItsTrunk,
        settings.sandbox,
        ({ runId, commands, late }) =>
          driveRun({
            options,
            session: onItsTrunk,
            chosen,
            stores,
            start: { kind: 'resume', unfinished: run, settings, startedAt: run.startedAt },
            runId,
            commands,
            late,
            prompts: loaded.prompts,
          }),
        run.runId,
      );
    } finally {
      await stores.close();
    }
  } finally {
    await session.release();
  }
}

function lastMethodChosen(events: readonly ColonyEvent[]): 'overlay' | 'worktree' | null {
  const last = events.findLast((event) => event.type === 'workspace.method-chosen');
  return last?.type === 'workspace.method-chosen' ? last.data.method : null;
}

/**
 * The origin a resumed run lands on: the one given again (for its password), else the one it
 * recorded; null for a run that lands on its own repository (it recorded none, or its own path).
 */
async function resumedOrigin(given: TrunkOrigin | undefined, events: EventStore, run: UnfinishedRun): Promise<{ readonly ok: true; readonly origin: TrunkOrigin | null } | { readonly ok: false; readonly error: string }> {
  if (given !== undefined) return { ok: true, origin: given };
  const recorded = await recordedOriginOf(events, run.runId);
  if (recorded === null || resolve(recorded) === resolve(run.repo)) return { ok: true, origin: null };
  const parsed = trunkOriginOf(recorded);
  return parsed.ok ? { ok: true, origin: parsed.origin } : parsed;
}

/**
 * Brings the run's trunk in this checkout to the origin's before the run goes on: made when the
 * checkout has no such branch (another machine, another clone), fast-forwarded when it is behind.
 * Refused when this checkout's trunk has commits the origin lacks: they are someone's work.
 */
async function takeTrunkFromOrigin(repo: Repository, origin: TrunkOrigin): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  const fetched = await fetchOriginTrunk(repo, origin);
  if (!fetched.ok) return fetched;
  if (fetched.commit === null) return { ok: false, error: `the run lands on ${repo.mainBranch} at the origin ${origin.url}, and the origin has no such branch: push it back there from a checkout that has it, then resume.` };
  const local = await readRef(repo, `refs/heads/${repo.mainBranch}`);
  if (local !== null && local !== fetched.commit && (await runGit(repo.root, ['merge-base', '--is-ancestor', local, fetched.commit])).code !== 0) {
    return {
      ok: false,
      error: `${repo.mainBranch} in ${repo.root} has commits the origin's lacks (it is at ${local.slice(0, 12)}, the origin's at ${fetched.commit.slice(0, 12)}): push them to the origin, or move this branch to the origin's, then resume.`,
    };
  }
  if (local === fetched.commit) return { ok: true };
  const args = ['update-ref', '-m', `${COLONY_REFLOG_PREFIX}follow ${origin.url}`, `refs/heads/${repo.mainBranch}`, fetched.commit];
  const moved = await runGit(repo.root, args);
  return moved.code === 0 ? { ok: true } : { ok: false, error: `could not bring ${repo.mainBranch} up to the origin's: ${describeFailure(args, moved)}` };
}
