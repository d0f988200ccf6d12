import type { EventBody } from '../../events/event-types.js';
import { commitTree, moveWorkspaceTo, prepareWork, replayOnto } from './in-process-merge.js';
import type { PreparedWork, ReplayResult } from './in-process-merge.js';
import { announceIntent } from './merge-outcome.js';
import type { MergeCheck, MergeIntent, MergeOutcome } from './merge-outcome.js';
import type { RepositoryObjects } from '../git/repository-objects.js';
import type { Repository } from '../git/repository.js';
import { changedPaths } from './tree-merge.js';
import { withTrunkTurn } from './trunk-turn.js';
import type { Workspace } from '../workspace.js';

/**
 * Landing without a worktree rebase: the workspace's work is committed, replayed onto the
 * trunk in this process (in parallel with every other merge), and only re-reading the trunk,
 * replaying again if it moved (cheap: the trees are cached) and the compare-and-swap take the
 * trunk's turn. A merge costs three git processes, all outside the turn: `add`, `write-tree`
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
  readonly onIntent: ((intent: MergeIntent) => void) | undefined;
}

export type InProcessOutcome = MergeOutcome | { readonly status: 'fallback'; readonly reason: string };

type TurnResult = InProcessOutcome | { readonly status: 'lost-race' };

async function readTrunk(landing: InProcessLanding): Promise<string> {
  const { repo, objects } = landing;
  const trunk = await objects.refs.readBranch(repo.trunk);
  if (trunk === null) throw new Error(`The trunk ${repo.trunk} has no commit.`);
  await objects.history.advanceTo(objects.store, trunk);
  return trunk;
}

function conflictFallback(replay: Extract<ReplayResult, { kind: 'conflict' }>): InProcessOutcome {
  return { status: 'fallback', reason: `both sides changed ${replay.path}` };
}

function alreadyThere(repo: Repository): MergeOutcome {
  return { status: 'nothing-to-merge', reason: `Every change in the workspace is already on ${repo.trunk}.` };
}

/** Runs the merge check on `tip` in the workspace; null when it passed (or there is none). */
async function runCheck(landing: InProcessLanding, tip: string, mainBefore: string): Promise<MergeOutcome | null> {
  if (landing.check === undefined) return null;
  const moved = await moveWorkspaceTo(landing.workspace, tip);
  if (!moved.ok) return { status: 'failed', error: `Could not put the replayed work in the workspace for the merge check: ${moved.error}` };
  const started = landing.now();
  const result = await landing.check(landing.workspace.path);
  landing.emit({ type: 'merge.checked', data: { commit: tip, mainBefore, passed: result.ok, durationMs: landing.now() - started } });
  return result.ok ? null : { status: 'check-failed', output: result.output, mainBefore };
}

/** Inside the trunk's turn: replay again if the trunk moved since `replayed` was made, then swap. */
async function swapInTurn(
  landing: InProcessLanding,
  work: PreparedWork,
  replayed: { mainBefore: string; tip: string; autoResolved: readonly string[] },
  attempts: { made: number },
): Promise<TurnResult> {
  const { repo, objects, workspace } = landing;
  let { mainBefore, tip, autoResolved } = replayed;
  const current = await readTrunk(landing);
  if (current !== mainBefore) {
    // A checked replay must be checked again, and that runs outside the turn.
    if (landing.check !== undefined || attempts.made >= landing.maxAttempts) return { status: 'lost-race' };
    attempts.made += 1;
    mainBefore = current;
    landing.emit({ type: 'merge.attempted', data: { branch: workspace.branch, mainBefore, attempt: attempts.made } });
    const again = await replayOnto(objects, work, mainBefore);
    if (again.kind === 'conflict') return conflictFallback(again);
    ({ tip, autoResolved } = again);
  }
  if (tip === mainBefore) return alreadyThere(repo);
  const unrecorded = announceIntent(landing.onIntent, { commit: tip, mainBefore, branch: workspace.branch }, repo.trunk);
  if (unrecorded !== null) return unrecorded;
  const swapped = await objects.refs.swap([{ ref: `refs/heads/${repo.trunk}`, next: tip, expected: mainBefore }]);
  const landed: TurnResult = { status: 'landed', commit: tip, mainBefore, attempts: attempts.made, files: [], autoResolved: [...autoResolved], waitMs: 0 };
  if (swapped.ok) return landed;
  const after = await objects.refs.readBranch(repo.trunk);
  // git can end after committing and before saying so: the trunk at the tip is a landing.
  if (after === tip) return landed;
  // Moved by another process, being moved right now, or a git that died before answering:
  // worth another attempt, which reads the trunk afresh.
  if (after !== mainBefore || swapped.unanswered || /\.lock'?: File exists/.test(swapped.error)) return { status: 'lost-race' };
  return { status: 'failed', error: `Could not move ${repo.trunk} to the merged commit: ${swapped.error}` };
}

export async function landInProcess(landing: InProcessLanding): Promise<InProcessOutcome> {
  const { repo, objects, workspace } = landing;
  const started = landing.now();
  await readTrunk(landing);
  const prepared = await prepareWork(objects, workspace, landing.message);
  if (prepared.kind === 'fallback') return { status: 'fallback', reason: prepared.reason };
  if (prepared.kind === 'failed') return { status: 'failed', error: prepared.error };
  const work = prepared.work;
  if (work.chain.length === 0) {
    return { status: 'nothing-to-merge', reason: `The workspace has no changes beyond ${repo.trunk}: nothing is uncommitted and every commit is already on ${repo.trunk}.` };
  }
  const attempts = { made: 0 };
  let waitMs = 0;
  while (attempts.made < landing.maxAttempts) {
    attempts.made += 1;
    const mainBefore = await readTrunk(landing);
    const replayed = await replayOnto(objects, work, mainBefore);
    if (replayed.kind === 'conflict') return conflictFallback(replayed);
    if (replayed.tip === mainBefore) return alreadyThere(repo);
    landing.emit({ type: 'merge.attempted', data: { branch: workspace.branch, mainBefore, attempt: attempts.made } });
    const checked = await runCheck(landing, replayed.tip, mainBefore);
    if (checked !== null) return checked;
    const queued = landing.now();
    const outcome = await withTrunkTurn(repo, async () => {
      waitMs += landing.now() - queued;
      return swapInTurn(landing, work, { mainBefore, tip: replayed.tip, autoResolved: replayed.autoResolved }, attempts);
    });
    if (outcome.status === 'lost-race') continue;
    if (outcome.status !== 'landed') return outcome;
    return finishLanding(landing, outcome, started, waitMs);
  }
  return {
    status: 'failed',
    error: `${repo.trunk} moved ${landing.maxAttempts} times while this workspace was merging; other merges kept landing first. Call merge again.`,
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
  // The trunk has moved: from here on nothing may turn the landing into a failure. What
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
