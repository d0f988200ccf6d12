import type { EventBody } from '../../events/event-types.js';
import { announceIntent } from './merge-outcome.js';
import type { MergeCheck, MergeOutcome, MergeToMainOptions } from './merge-outcome.js';
import { resolveAppendOnlyConflicts } from './append-only-merge.js';
import { countCommitsAhead } from '../git/commits-ahead.js';
import { landInProcess } from './land-in-process.js';
import { repositoryObjects } from '../git/repository-objects.js';
import { withMainTurn } from './main-turn.js';
import { landOnOrigin } from '../git/trunk-origin.js';
import { filesWithConflictMarkers } from './conflict-markers.js';
import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { GitResult } from '../git/git.js';
import {
  forgetConflictedFiles,
  readConflictedFiles,
  readRebaseState,
  recordConflictedFiles,
  unmergedFiles,
} from '../git/rebase-state.js';
import type { ConflictSettler, RebaseInProgress } from '../git/rebase-state.js';
import type { Repository } from '../git/repository.js';
import { resolveBranch } from '../workspace.js';
import type { Workspace } from '../workspace.js';
import { checkWorktreeGitFile } from '../git/worktree-admin.js';
import { errorMessage } from '../../errors/error-message.js';

const DEFAULT_MAX_ATTEMPTS = 10;
const LOCK_HELD = /\.lock'?: File exists/;

interface MergeContext {
  readonly repo: Repository;
  readonly workspace: Workspace;
  readonly emit: (event: EventBody) => void;
  /** Files settled by the harness during this call, for the landing's record. */
  readonly autoResolved: string[];
  /** Time spent queued for main's turn. */
  readonly waited: { ms: number };
  readonly check: MergeCheck | undefined;
  readonly onIntent: MergeToMainOptions['onIntent'];
  readonly settleConflicts: ConflictSettler | undefined;
  readonly now: () => number;
}

/** A step of a merge: go on, or stop the merge with its outcome. */
type Step = { readonly stopped: false } | { readonly stopped: true; readonly outcome: MergeOutcome };

const proceed: Step = { stopped: false };

function stop(outcome: MergeOutcome): Step {
  return { stopped: true, outcome };
}

function gitFailure(args: readonly string[], result: GitResult): MergeOutcome {
  return { status: 'failed', error: describeFailure(args, result) };
}

function failed(args: readonly string[], result: GitResult): Step {
  return stop(gitFailure(args, result));
}

async function git(context: MergeContext, args: readonly string[]) {
  return runGit(context.workspace, args);
}

async function conflicted(context: MergeContext, files: string[], mainBefore: string, unsettled?: string): Promise<Step> {
  await recordConflictedFiles(context.workspace, files);
  context.emit({ type: 'merge.conflicted', data: { files, mainBefore, ...(unsettled === undefined ? {} : { unsettled }) } });
  return stop({ status: 'conflicted', files, mainBefore, ...(unsettled === undefined ? {} : { unsettled }) });
}

/** Finishes a rebase a previous call left stopped at a conflict the agent has since resolved. */
async function continueRebase(context: MergeContext, rebase: RebaseInProgress): Promise<Step> {
  const worktree = context.workspace;
  const candidates = [...new Set([...(await unmergedFiles(worktree)), ...(await readConflictedFiles(worktree))])];
  const stillMarked = await filesWithConflictMarkers(worktree.path, candidates);
  if (stillMarked.length > 0) return stop({ status: 'conflicted', files: stillMarked, mainBefore: rebase.onto });
  const addArgs = ['add', '--all'];
  const added = await git(context, addArgs);
  if (added.code !== 0) return failed(addArgs, added);
  const continueArgs = ['rebase', '--continue'];
  const continued = await git(context, continueArgs);
  if (continued.code === 0) {
    await forgetConflictedFiles(worktree);
    return proceed;
  }
  if ((await unmergedFiles(worktree)).length > 0) {
    const settled = await settleRebase(context, rebase.onto);
    if (!settled.stopped) await forgetConflictedFiles(worktree);
    return settled;
  }
  return failed(continueArgs, continued);
}

/**
 * A rebase stopped at conflicts: settles the append-only ones and continues, commit by
 * commit, until the rebase is done or a real conflict is left for the agent (only those
 * files keep their markers).
 */
async function settleRebase(context: MergeContext, onto: string): Promise<Step> {
  const worktree = context.workspace;
  for (;;) {
    const files = await unmergedFiles(worktree);
    const appended = await resolveAppendOnlyConflicts(worktree, files);
    const settled = appended.remaining.length === 0 || context.settleConflicts === undefined ? appended : await context.settleConflicts(worktree, appended.remaining);
    const resolved = settled === appended ? appended.resolved : [...appended.resolved, ...settled.resolved];
    context.autoResolved.push(...resolved.filter((file) => !context.autoResolved.includes(file)));
    if (settled.remaining.length > 0) return conflicted(context, settled.remaining, onto, settled.unsettled);
    const continueArgs = ['rebase', '--continue'];
    const continued = await git(context, continueArgs);
    if (continued.code === 0) return proceed;
    if ((await unmergedFiles(worktree)).length === 0) return failed(continueArgs, continued);
  }
}

async function commitPendingChanges(context: MergeContext, message: string): Promise<Step> {
  const addArgs = ['add', '--all'];
  const added = await git(context, addArgs);
  if (added.code !== 0) return failed(addArgs, added);
  const staged = await git(context, ['diff', '--no-ext-diff', '--no-textconv', '--cached', '--quiet']);
  if (staged.code === 0) return proceed;
  const commitArgs = ['commit', '--quiet', '--no-verify', '--cleanup=verbatim', '--file=-'];
  const committed = await runGit(context.workspace, commitArgs, { input: message });
  return committed.code === 0 ? proceed : failed(commitArgs, committed);
}

async function checkOnBranch(context: MergeContext): Promise<Step> {
  const head = await git(context, ['symbolic-ref', '--quiet', 'HEAD']);
  const expected = `refs/heads/${context.workspace.branch}`;
  if (head.code === 0 && head.stdout.trim() === expected) return proceed;
  return stop({
    status: 'failed',
    error: `The workspace is not on its branch ${context.workspace.branch}, so there is nothing defined to merge. Run \`git switch ${context.workspace.branch}\` in ${context.workspace.path} and try again.`,
  });
}

/** Replays the workspace's commits onto `mainBefore`, leaving a conflicting rebase stopped. */
async function rebaseOnto(context: MergeContext, mainBefore: string): Promise<Step> {
  const rebaseArgs = ['rebase', '--quiet', mainBefore];
  const rebased = await git(context, rebaseArgs);
  if (rebased.code === 0) return proceed;
  const files = await unmergedFiles(context.workspace);
  if (files.length > 0) return settleRebase(context, mainBefore);
  // No conflict but no success either (an ignored file in the way, for instance): put the
  // branch back as it was so the workspace stays usable.
  if ((await readRebaseState(context.workspace)) !== null) await git(context, ['rebase', '--abort']);
  return failed(rebaseArgs, rebased);
}

/**
 * Gets the workspace to a branch that holds all its work as commits: finishes a stopped
 * rebase, then commits whatever is uncommitted. Stops with 'nothing-to-merge' when the
 * branch has nothing main lacks.
 */
async function prepareBranch(context: MergeContext, message: string): Promise<Step> {
  const worktree = context.workspace;
  const rebase = await readRebaseState(worktree);
  if (rebase === null) {
    await forgetConflictedFiles(worktree);
  } else {
    const continued = await continueRebase(context, rebase);
    if (continued.stopped) return continued;
  }
  const onBranch = await checkOnBranch(context);
  if (onBranch.stopped) return onBranch;
  const committed = await commitPendingChanges(context, message);
  if (committed.stopped) return committed;
  const mainBranch = context.repo.mainBranch;
  const ahead = await countCommitsAhead(context.workspace, mainBranch, ['HEAD']);
  if (!ahead.ok) return stop({ status: 'failed', error: ahead.error });
  if (ahead.count > 0) return proceed;
  return stop({
    status: 'nothing-to-merge',
    reason: `The workspace has no changes beyond ${mainBranch}: nothing is uncommitted and every commit is already on ${mainBranch}.`,
  });
}

async function headCommit(context: MergeContext): Promise<string> {
  const result = await git(context, ['rev-parse', '--verify', 'HEAD^{commit}']);
  if (result.code !== 0) throw new Error(describeFailure(['rev-parse', 'HEAD'], result));
  return result.stdout.trim();
}

async function changedFiles(context: MergeContext, from: string, to: string): Promise<string[]> {
  const args = ['diff', '--no-ext-diff', '--no-textconv', '--name-only', '--no-renames', '-z', from, to];
  const result = await git(context, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return splitNul(result.stdout);
}

async function landOnMain(context: MergeContext, options: MergeToMainOptions, maxAttempts: number): Promise<MergeOutcome> {
  const { repo, now } = context;
  const started = now();
  const prepared = await prepareBranch(context, options.message);
  if (prepared.stopped) return prepared.outcome;

  const attempts = { made: 0, max: maxAttempts };
  while (attempts.made < maxAttempts) {
    // The expensive part, rebasing onto main as it is now, runs alongside every other
    // merge; only checking main and moving it (rebasing again if it moved meanwhile)
    // takes turns, first come first served, so within this process no merge starves.
    attempts.made += 1;
    const mainBefore = await resolveBranch(repo, repo.mainBranch);
    const rebased = await rebaseIfBehind(context, mainBefore, attempts.made);
    if (rebased.stopped) return rebased.outcome;
    const checked = await runCheck(context, mainBefore);
    if (checked.stopped) return checked.outcome;
    const queued = now();
    const outcome = await withMainTurn(repo, () => {
      context.waited.ms += now() - queued;
      return swapMain(context, mainBefore, attempts, () => now() - started);
    });
    // Another process moved main between the read and the swap: try again.
    if (outcome !== 'lost-race') return outcome;
  }
  return {
    status: 'failed',
    error: `${repo.mainBranch} moved ${maxAttempts} times while this workspace was merging; other merges kept landing first. Call merge again.`,
  };
}

/** Runs the merge check, if any, on the rebased workspace. */
async function runCheck(context: MergeContext, mainBefore: string): Promise<Step> {
  if (context.check === undefined) return proceed;
  const started = context.now();
  const commit = await headCommit(context);
  const result = await context.check(context.workspace.path);
  context.emit({ type: 'merge.checked', data: { commit, mainBefore, passed: result.ok, durationMs: context.now() - started } });
  return result.ok ? proceed : stop({ status: 'check-failed', output: result.error, mainBefore });
}

/** Records the attempt and rebases the branch onto `mainBefore` unless it is already based on it. */
async function rebaseIfBehind(context: MergeContext, mainBefore: string, attempt: number): Promise<Step> {
  context.emit({ type: 'merge.attempted', data: { branch: context.workspace.branch, mainBefore, attempt } });
  const isBased = await git(context, ['merge-base', '--is-ancestor', mainBefore, 'HEAD']);
  if (isBased.code === 0) return proceed;
  return rebaseOnto(context, mainBefore);
}

/**
 * The serial section: when main moved since `rebasedOnto` was read, rebase onto where it
 * is now (nobody in this process can move it meanwhile), then compare-and-swap it to the
 * branch. 'lost-race' when another process moved it first.
 */
async function swapMain(
  context: MergeContext,
  rebasedOnto: string,
  attempts: { made: number; readonly max: number },
  elapsedMs: () => number,
): Promise<MergeOutcome | 'lost-race'> {
  const { repo, workspace } = context;
  let mainBefore = rebasedOnto;
  const current = await resolveBranch(repo, repo.mainBranch);
  if (current !== mainBefore) {
    // A checked rebase must be checked again, and that runs outside the turn.
    if (attempts.made >= attempts.max || context.check !== undefined) return 'lost-race';
    attempts.made += 1;
    mainBefore = current;
    const rebased = await rebaseIfBehind(context, mainBefore, attempts.made);
    if (rebased.stopped) return rebased.outcome;
  }
  const attempt = attempts.made;
  const commit = await headCommit(context);
  if (commit === mainBefore) {
    return { status: 'nothing-to-merge', reason: `Every change in the workspace is already on ${repo.mainBranch}.` };
  }
  const unrecorded = await announceIntent(context.onIntent, { commit, mainBefore, branch: workspace.branch }, repo.mainBranch);
  if (unrecorded !== null) return unrecorded;
  if (repo.origin !== undefined) {
    // The trunk lives on the origin: the push is the swap; a refused one brought the trunk here up to it.
    const landed = await landOnOrigin(repo, repo.origin, commit, mainBefore, `merge ${workspace.branch}`);
    if (landed.status === 'lost-race') return 'lost-race';
    if (landed.status === 'failed') return { status: 'failed', error: `Could not land on ${repo.mainBranch}: ${landed.error}` };
    return landedOutcome(context, commit, mainBefore, attempt, elapsedMs);
  }
  const swapArgs = ['update-ref', '-m', `colony: merge ${workspace.branch}`, `refs/heads/${repo.mainBranch}`, commit, mainBefore];
  const swapped = await git(context, swapArgs);
  if (swapped.code === 0) return landedOutcome(context, commit, mainBefore, attempt, elapsedMs);
  // Main having moved since it was read, or being moved right now (its lock is held),
  // is a lost race worth retrying; anything else would fail the same way again.
  const moved = (await resolveBranch(repo, repo.mainBranch)) !== mainBefore;
  if (!moved && !LOCK_HELD.test(swapped.stderr)) return gitFailure(swapArgs, swapped);
  return 'lost-race';
}

async function landedOutcome(context: MergeContext, commit: string, mainBefore: string, attempt: number, elapsedMs: () => number): Promise<MergeOutcome> {
  const files = await changedFiles(context, mainBefore, commit);
  const autoResolved = [...context.autoResolved];
  const waitMs = context.waited.ms;
  context.emit({ type: 'merge.landed', data: { commit, mainBefore, attempts: attempt, files, durationMs: elapsedMs(), autoResolved, waitMs, via: 'rebase' } });
  return { status: 'landed', commit, mainBefore, attempts: attempt, files, autoResolved, waitMs };
}

/**
 * Lands the workspace's work on main: commits what is uncommitted, replays it onto the
 * main's current commit, and moves main with a compare-and-swap ref update, retrying
 * when another merge won the race. The replay is done in-process when the trees merge cleanly
 * (`land-in-process.ts`), and by git's rebase in the workspace otherwise. Conflicts where both
 * sides only appended lines are settled here; real ones are handed back as 'conflicted' with
 * the rebase left stopped; calling again after editing the files finishes it. After 'landed'
 * the workspace's branch is the new main commit, so work can go on in the same workspace.
 *
 * Every compare-and-swap of main is announced to `onIntent` first, inside the turn, so
 * the caller can make it durable; one it cannot record ends the merge as 'failed' with
 * main untouched. A call after one that landed but died before the workspace caught up lands
 * nothing twice: the work already on main is dropped from the replay (or skipped by git's
 * rebase), and the outcome is 'nothing-to-merge'.
 *
 * Never throws for what git or the disk does (that is a 'failed' outcome); throws only for
 * a malformed `maxAttempts` or a `record` that throws. One caller per workspace at a time; any number of workspaces may
 * merge concurrently.
 */
export type { MergeCheck, MergeIntent, MergeOutcome, MergeToMainOptions } from './merge-outcome.js';

export async function mergeToMain(repo: Repository, workspace: Workspace, options: MergeToMainOptions): Promise<MergeOutcome> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  const record = options.record ?? (() => undefined);
  const handlerFailures: unknown[] = [];
  const emit = (event: EventBody): void => {
    try {
      record(event);
    } catch (error) {
      handlerFailures.push(error);
      throw error;
    }
  };
  const now = options.now ?? Date.now;
  // colony's git calls below name the workspace's git directory and would merge regardless, but
  // a `.git` the agent broke means its own commits went elsewhere: it must hear of it now.
  const broken = await checkWorktreeGitFile(workspace.path, workspace.gitDir);
  if (broken !== null) return { status: 'failed', error: `${broken} Then call merge again; nothing was merged.` };
  try {
    const objects = await repositoryObjects(repo);
    if (objects !== null) {
      const landing = { repo, workspace, objects, emit, message: options.message, maxAttempts, now, check: options.check, onIntent: options.onIntent };
      const outcome = await landInProcess(landing);
      if (outcome.status !== 'fallback') return outcome;
    }
    const context: MergeContext = { repo, workspace, emit, autoResolved: [], waited: { ms: 0 }, check: options.check, onIntent: options.onIntent, settleConflicts: options.settleConflicts, now };
    return await landOnMain(context, options, maxAttempts);
  } catch (error) {
    // A throwing event handler is the caller's bug, not a merge failure: let it surface.
    if (handlerFailures.includes(error)) throw error;
    const reason = errorMessage(error);
    return { status: 'failed', error: `Merging ${workspace.branch} into ${repo.mainBranch} stopped: ${reason}` };
  }
}
