import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COLONY_IDENTITY, describeFailure, runGit, runGitSequence } from '../git/git.js';
import { binaryText, identityLine, parseCommit, serializeCommit } from '../git/git-objects.js';
import type { CommitObject } from '../git/git-objects.js';
import { isDirectory } from '../files/path-exists.js';
import type { RepositoryObjects } from '../git/repository-objects.js';
import { mergeTrees } from './tree-merge.js';
import type { Workspace } from '../workspace.js';

/**
 * The in-process half of a merge: the workspace's commits (and what is uncommitted, as one
 * more commit) replayed onto a main commit by merging trees in this process, without a
 * worktree. It covers every merge whose files do not clash, or clash only in ways colony
 * settles itself; anything else is left to git's rebase in the workspace (`merge-to-main.ts`).
 */

/** The workspace's work, ready to replay: its own commits since main, oldest first, plus the uncommitted change. */
export interface PreparedWork {
  readonly chain: readonly ChainCommit[];
  /** The branch's commit: the last of `chain`, or main commit it sits on when `chain` is empty. */
  readonly head: string;
  readonly headTree: string;
}

export interface ChainCommit {
  readonly oid: string;
  readonly commit: CommitObject;
}

export type PrepareResult =
  | { readonly kind: 'prepared'; readonly work: PreparedWork }
  | { readonly kind: 'fallback'; readonly reason: string }
  | { readonly kind: 'failed'; readonly error: string };

export type ReplayResult =
  | { readonly kind: 'replayed'; readonly tip: string; readonly tree: string; readonly autoResolved: readonly string[] }
  | { readonly kind: 'conflict'; readonly path: string };

const CHAIN_LIMIT = 500;

async function readCommit(objects: RepositoryObjects, oid: string): Promise<CommitObject> {
  const object = await objects.store.read(oid);
  if (object === null || object.type !== 'commit') throw new Error(`${oid} is not a commit in this repository`);
  return parseCommit(object.content);
}

function colonyIdentityNow(): string {
  return identityLine(COLONY_IDENTITY.name, COLONY_IDENTITY.email, new Date());
}

/** Whether a rebase is stopped in the worktree (then git's path finishes it). */
async function rebaseStopped(gitDir: string): Promise<boolean> {
  const [merge, apply] = await Promise.all([isDirectory(join(gitDir, 'rebase-merge')), isDirectory(join(gitDir, 'rebase-apply'))]);
  return merge || apply;
}

/**
 * Stages everything in the workspace and turns it into commits on its branch: what is
 * uncommitted becomes one commit with `message`, and the branch moves to it (through the same
 * ref process as main, compare-and-swap). The workspace is then clean, so nothing done
 * to it later can be taken for the agent's own uncommitted work.
 */
export async function prepareWork(objects: RepositoryObjects, workspace: Workspace, message: string): Promise<PrepareResult> {
  const gitDir = workspace.gitDir;
  if (await rebaseStopped(gitDir)) return { kind: 'fallback', reason: 'a rebase is stopped in the workspace' };
  const head = (await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => '')).trim();
  if (head !== `ref: refs/heads/${workspace.branch}`) return { kind: 'fallback', reason: 'the workspace is not on its branch' };
  // One child for both: `add` stages everything, `write-tree` prints the staged tree's id.
  const staged = await runGitSequence(workspace, [['add', '--all'], ['write-tree']]);
  const indexTree = staged.stdout.trim();
  if (staged.code !== 0 || !/^[0-9a-f]{40}$/.test(indexTree)) {
    // An index git cannot write as a tree (unmerged entries) is git's rebase path's to handle.
    if (/unmerged|write-tree/.test(staged.stderr)) return { kind: 'fallback', reason: 'the index cannot be written as a tree' };
    return { kind: 'failed', error: describeFailure(['add', '--all'], staged) };
  }
  const branchCommit = await objects.refs.readBranch(workspace.branch);
  if (branchCommit === null) return { kind: 'fallback', reason: 'the branch has no commit' };

  const chain: ChainCommit[] = [];
  let current = branchCommit;
  while (!objects.history.has(current)) {
    if (chain.length >= CHAIN_LIMIT) return { kind: 'fallback', reason: `more than ${CHAIN_LIMIT} commits since main` };
    const commit = await readCommit(objects, current);
    const parent = commit.parents[0];
    if (commit.parents.length !== 1 || parent === undefined) return { kind: 'fallback', reason: 'the branch holds a merge or root commit' };
    chain.unshift({ oid: current, commit });
    current = parent;
  }
  const last = chain.at(-1);
  const headTree = last?.commit.tree ?? (await readCommit(objects, branchCommit)).tree;
  if (indexTree === headTree) return { kind: 'prepared', work: { chain, head: branchCommit, headTree } };

  // The message exactly as given, as `git commit --cleanup=verbatim` would store it.
  const identity = colonyIdentityNow();
  const pending: CommitObject = { tree: indexTree, parents: [branchCommit], author: identity, committer: identity, message: binaryText(message) };
  const pendingOid = await objects.store.write('commit', serializeCommit(pending));
  const branchSwap = { ref: `refs/heads/${workspace.branch}`, next: pendingOid, expected: branchCommit };
  let moved = await objects.refs.swap([branchSwap]);
  // A git that died before answering may or may not have moved the branch: look, then try once more.
  if (!moved.ok && moved.unanswered) moved = (await objects.refs.readBranch(workspace.branch)) === pendingOid ? { ok: true } : await objects.refs.swap([branchSwap]);
  if (!moved.ok) return { kind: 'failed', error: `Could not commit the workspace's changes on ${workspace.branch}: ${moved.error}` };
  chain.push({ oid: pendingOid, commit: pending });
  return { kind: 'prepared', work: { chain, head: pendingOid, headTree: indexTree } };
}

/**
 * Replays the prepared commits onto `onto`: a commit whose parent is already the tip is kept
 * as it is; any other is rewritten with the merged tree, its author and message, and colony as
 * committer; one that changes nothing any more is dropped, as git's rebase drops it.
 */
export async function replayOnto(objects: RepositoryObjects, work: PreparedWork, onto: string): Promise<ReplayResult> {
  let tip = onto;
  let tipTree = (await readCommit(objects, onto)).tree;
  const autoResolved = new Set<string>();
  let parentTree: string | null = null;
  for (const { oid, commit } of work.chain) {
    const parent = commit.parents[0] ?? '';
    const baseTree: string = parentTree ?? (await readCommit(objects, parent)).tree;
    parentTree = commit.tree;
    if (parent === tip) {
      tip = oid;
      tipTree = commit.tree;
      continue;
    }
    const merged = await mergeTrees(objects.store, baseTree, tipTree, commit.tree);
    if (!merged.ok) return { kind: 'conflict', path: merged.conflict };
    for (const path of merged.autoResolved) autoResolved.add(path);
    if (merged.tree === tipTree) continue;
    const rewritten: CommitObject = { ...commit, tree: merged.tree, parents: [tip], committer: colonyIdentityNow() };
    tip = await objects.store.write('commit', serializeCommit(rewritten));
    tipTree = merged.tree;
  }
  return { kind: 'replayed', tip, tree: tipTree, autoResolved: [...autoResolved].sort() };
}

/** The tree of a commit. */
export async function commitTree(objects: RepositoryObjects, commit: string): Promise<string> {
  return (await readCommit(objects, commit)).tree;
}

/**
 * Brings the workspace's branch, index and files to `commit`, which contains the branch's
 * work (a landed merge, or the work replayed for a check): `git reset --keep`, which refuses
 * rather than overwrite anything uncommitted.
 */
export async function moveWorkspaceTo(workspace: Workspace, commit: string): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  const args = ['reset', '--quiet', '--keep', commit];
  const result = await runGit(workspace, args);
  return result.code === 0 ? { ok: true } : { ok: false, error: describeFailure(args, result) };
}
