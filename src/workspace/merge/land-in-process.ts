import type { EventBody } from '../../events/event-types.js';
import { commitTree, moveWorkspaceTo, prepareWork, replayOnto } from './in-process-merge.js';
import type { PreparedWork, ReplayResult } from './in-process-merge.js';
import { announceIntent } from './merge-outcome.js';
import type { MergeCheck, MergeOutcome, MergeToMainOptions } from './merge-outcome.js';
import type { RepositoryObjects } from '../git/repository-objects.js';
import type { Repository } from '../git/repository.js';
import { changedPaths } from './tree-merge.js';
import { withMainTurn } from './main-turn.js';
import { landOnOrigin } from '../git/trunk-origin.js';
import type { Workspace } from '../workspace.js';

/**
 * Landing without a worktree rebase: the workspace's work is committed, replayed onto
 * main in this process (in parallel with every other merge), and only re-reading main,
 * replaying again if it moved (cheap: the trees are cached) and the compare-and-swap take the
 * main's turn. A merge costs three git processes, all outside the turn: `add`, `write-tree`
 * and the `reset --keep` that brings the workspace to the landed commit. 'fallback' hands the
 * merge to the rebase path: a stopped rebase, a conflict colony cannot settle, an unusual branch.
 */
export interface InProcessLanding {
  readonly repo: Repository;
  readonly workspace: Workspace;
  readonly objects: RepositoryObjects;
  readonly emit: (event: EventBody) => void;
  readonly message: string;
  readonly maxAttempts: number;
  readonly now: () => number;
  readonly check: MergeCheck | undefined;
  /** Told each swap just before it is attempted (see `MergeToMainOptions.onIntent`). */
  readonly onIntent: MergeToMainOptions['onIntent'];
}

export type InProcessOutcome = MergeOutcome | { readonly status: 'fallback'; readonly reason: string };

type TurnResult = InProcessOutcome | { readonly status: 'lost-race' };

async function readMain(landing: InProcessLanding): Promise<string> {
  const { repo, objects } = landing;
  const mainCommit = await objects.refs.readBranch(repo.mainBranch);
  if (mainCommit === null) throw new Error(`Main ${repo.mainBranch} has no commit.`);
  await objects.history.advanceTo(objects.store, mainCommit);
  return mainCommit;
}

function conflictFallback(replay: Extract<ReplayResult, { kind: 'conflict' }>): InProcessOutcome {
  return { status: 'fallback', reason: `both sides changed ${replay.path}` };
}

function alreadyThere(repo: Repository): MergeOutcome {
  return { status: 'nothing-to-merge', reason: `Every change in the workspace is already on ${repo.mainBranch}.` };
}

/** Runs the merge check on `tip` in the workspace; null when it passed (or there is none). */
async function runCheck(landing: InProcessLanding, tip: string, mainBefore: string): Promise<MergeOutcome | null> {
  if (landing.check === undefined) return null;
  const moved = await moveWorkspaceTo(landing.workspace, tip);
  if (!moved.ok) return { status: 'failed', error: `Could not put the replayed work in the workspace for the merge check: ${moved.error}` };
  const started = landing.now();
  const result = await landing.check(landing.workspace.path);
  landing.emit({ type: 'merge.checked', data: { commit: tip, mainBefore, passed: result.ok, durationMs: landing.now() - started } });
  return result.ok ? null : { status: 'check-failed', output: result.error, mainBefore };
}

/**
 * Inside main's turn, main having moved to `current`: the work replayed onto it, one attempt
 * more; or the turn's result when that cannot be done here (a checked replay must be checked
 * again, outside the turn; the attempts are used up; a conflict needs the rebase path).
 */
async function replayInTurn(
  landing: InProcessLanding,
  work: PreparedWork,
  current: string,
  attempts: { made: number },
): Promise<{ readonly kind: 'replayed'; readonly tip: string; readonly autoResolved: readonly string[] } | { readonly kind: 'stop'; readonly result: TurnResult }> {
  if (landing.check !== undefined || attempts.made >= landing.maxAttempts) return { kind: 'stop', result: { status: 'lost-race' } };
  attempts.made += 1;
  landing.emit({ type: 'merge.attempted', data: { branch: landing.workspace.branch, mainBefore: current, attempt: attempts.made } });
  const again = await replayOnto(landing.objects, work, current);
  if (again.kind === 'conflict') return { kind: 'stop', result: conflictFallback(again) };
  return { kind: 'replayed', tip: again.tip, autoResolved: again.autoResolved };
}

/** Inside main's turn: replay again if main moved since `replayed` was made, then swap. */
async function swapInTurn(
  landing: InProcessLanding,
  work: PreparedWork,
  replayed: { mainBefore: string; tip: string; autoResolved: readonly string[] },
  attempts: { made: number },
): Promise<TurnResult> {
  const { repo, objects, workspace } = landing;
  let { mainBefore, tip, autoResolved } = replayed;
  const current = await readMain(landing);
  if (current !== mainBefore) {
    const again = await replayInTurn(landing, work, current, attempts);
    if (again.kind === 'stop') return again.result;
    ({ tip, autoResolved } = again);
    mainBefore = current;
  }
  if (tip === mainBefore) return alreadyThere(repo);
  const unrecorded = await announceIntent(landing.onIntent, { commit: tip, mainBefore, branch: workspace.branch }, repo.mainBranch);
  if (unrecorded !== null) return unrecorded;
  if (repo.origin !== undefined) return swapOnOrigin(landing, work, { mainBefore, tip, autoResolved }, attempts);
  const swapped = await objects.refs.swap([{ ref: `refs/heads/${repo.mainBranch}`, next: tip, expected: mainBefore }]);
  const landed: TurnResult = { status: 'landed', commit: tip, mainBefore, attempts: attempts.made, files: [], autoResolved: [...autoResolved], waitMs: 0 };
  if (swapped.ok) return landed;
  const after = await objects.refs.readBranch(repo.mainBranch);
  // git can end after committing and before saying so: main at the tip is a landing.
  if (after === tip) return landed;
  // Moved by another process, being moved right now, or a git that died before answering:
  // worth another attempt, which reads main afresh.
  if (after !== mainBefore || swapped.unanswered || /\.lock'?: File exists/.test(swapped.error)) return { status: 'lost-race' };
  return { status: 'failed', error: `Could not move ${repo.mainBranch} to the merged commit: ${swapped.error}` };
}

/**
 * The swap when the trunk lives on an origin: a push that names `mainBefore`. A push refused
 * because another host landed first brings the trunk here up to the origin's and, within the
 * same turn, replays and pushes again: the oldest merge waiting on this host keeps trying
 * until it lands, so a merge never goes to the back of the queue for losing to another host.
 */
async function swapOnOrigin(
  landing: InProcessLanding,
  work: PreparedWork,
  replayed: { mainBefore: string; tip: string; autoResolved: readonly string[] },
  attempts: { made: number },
): Promise<TurnResult> {
  const { repo, workspace } = landing;
  const origin = repo.origin;
  if (origin === undefined) throw new Error('swapOnOrigin needs a repository with an origin');
  let { mainBefore, tip, autoResolved } = replayed;
  for (;;) {
    const landed = await landOnOrigin(repo, origin, tip, mainBefore, `merge ${workspace.branch}`);
    if (landed.status === 'landed') return { status: 'landed', commit: tip, mainBefore, attempts: attempts.made, files: [], autoResolved: [...autoResolved], waitMs: 0 };
    if (landed.status === 'failed') return { status: 'failed', error: `Could not land on ${repo.mainBranch}: ${landed.error}` };
    const current = await readMain(landing);
    const again = await replayInTurn(landing, work, current, attempts);
    if (again.kind === 'stop') return again.result;
    ({ tip, autoResolved } = again);
    mainBefore = current;
    if (tip === mainBefore) return alreadyThere(repo);
  }
}

export async function landInProcess(landing: InProcessLanding): Promise<InProcessOutcome> {
  const { repo, objects, workspace } = landing;
  const started = landing.now();
  await readMain(landing);
  const prepared = await prepareWork(objects, workspace, landing.message);
  if (prepared.kind === 'fallback') return { status: 'fallback', reason: prepared.reason };
  if (prepared.kind === 'failed') return { status: 'failed', error: prepared.error };
  const work = prepared.work;
  if (work.chain.length === 0) {
    return { status: 'nothing-to-merge', reason: `The workspace has no changes beyond ${repo.mainBranch}: nothing is uncommitted and every commit is already on ${repo.mainBranch}.` };
  }
  const attempts = { made: 0 };
  let waitMs = 0;
  while (attempts.made < landing.maxAttempts) {
    attempts.made += 1;
    const mainBefore = await readMain(landing);
    const replayed = await replayOnto(objects, work, mainBefore);
    if (replayed.kind === 'conflict') return conflictFallback(replayed);
    if (replayed.tip === mainBefore) return alreadyThere(repo);
    landing.emit({ type: 'merge.attempted', data: { branch: workspace.branch, mainBefore, attempt: attempts.made } });
    const checked = await runCheck(landing, replayed.tip, mainBefore);
    if (checked !== null) return checked;
    const queued = landing.now();
    const outcome = await withMainTurn(repo, async () => {
      waitMs += landing.now() - queued;
      return swapInTurn(landing, work, { mainBefore, tip: replayed.tip, autoResolved: replayed.autoResolved }, attempts);
    });
    if (outcome.status === 'lost-race') continue;
    if (outcome.status !== 'landed') return outcome;
    return finishLanding(landing, outcome, started, waitMs);
  }
  return {
    status: 'failed',
    error: `${repo.mainBranch} moved ${landing.maxAttempts} times while this workspace was merging; other merges kept landing first. Call merge again.`,
  };
}

async function landedFiles(objects: RepositoryObjects, outcome: { readonly mainBefore: string; readonly commit: string }): Promise<string[]> {
  await objects.history.advanceTo(objects.store, outcome.commit);
  const [before, after] = await Promise.all([commitTree(objects, outcome.mainBefore), commitTree(objects, outcome.commit)]);
  return changedPaths(objects.store, before, after);
}

async function finishLanding(
  landing: InProcessLanding,
  outcome: Extract<MergeOutcome, { status: 'landed' }>,
  started: number,
  waitMs: number,
): Promise<MergeOutcome> {
  const { objects, workspace } = landing;
  // Main has moved: from here on nothing may turn the landing into a failure. What
  // cannot be worked out (the files, if git's reader died) is left out rather than fatal.
  const files = await landedFiles(objects, outcome).catch(() => []);
  const moved = await moveWorkspaceTo(workspace, outcome.commit);
  const landed = { ...outcome, files, waitMs, ...(moved.ok ? {} : { workspaceBehind: moved.error }) };
  landing.emit({
    type: 'merge.landed',
    data: {
      commit: landed.commit,
      mainBefore: landed.mainBefore,
      attempts: landed.attempts,
      files,
      durationMs: landing.now() - started,
      autoResolved: landed.autoResolved,
      waitMs,
      via: 'in-process',
    },
  });
  return landed;
}
