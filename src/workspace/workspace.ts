import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { countCommitsAhead } from './commits-ahead.js';
import { describeFailure, runGit } from './git.js';
import { pathExists } from './path-exists.js';
import type { Repository } from './repository.js';
import { withWorktreeAdminLock } from './worktree-admin-lock.js';

/** One agent's own copy of the repository: a git worktree on its own branch. */
export interface Workspace {
  readonly id: string;
  /** Absolute path of the worktree. */
  readonly path: string;
  /** Always `colony/<id>`. */
  readonly branch: string;
  /** The trunk commit the workspace was made from. */
  readonly baseCommit: string;
}

export interface CreateWorkspaceOptions {
  /** Names the branch and the directory; letters, digits, '.', '_' and '-'. */
  readonly id: string;
  /** The directory the worktree is made in, as `<parentDir>/<id>`; created if missing. */
  readonly parentDir: string;
}

export interface RemoveWorkspaceOptions {
  /**
   * Also delete the `colony/<id>` branch, but only when the trunk contains every commit on
   * it; otherwise the branch is kept so its commits stay reachable.
   */
  readonly deleteBranch: boolean;
  /**
   * With `deleteBranch`, delete the branch even when the trunk lacks some of its commits.
   * Those commits are then unreachable and lost once git collects garbage.
   */
  readonly forceDeleteBranch?: boolean;
}

/**
 * How a `removeWorkspace` call ended. `removed`: the worktree is gone, and the branch too
 * when that was asked. Otherwise something was kept; `reason` says what, why, and what to do.
 */
export type RemoveWorkspaceResult = { readonly removed: true } | { readonly removed: false; readonly reason: string };

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The branch a workspace with this id works on. */
export function workspaceBranch(id: string): string {
  return `colony/${id}`;
}

/** The commit a branch points at. Throws when the branch does not exist. */
export async function resolveBranch(repo: Repository, branch: string): Promise<string> {
  const args = ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`];
  const result = await runGit(repo.root, args);
  const commit = result.stdout.trim();
  if (result.code !== 0 || commit === '') throw new Error(`The branch ${branch} does not exist in ${repo.root}.`);
  return commit;
}

/**
 * Makes a workspace from the trunk's current commit: `git worktree add -b colony/<id>`. The
 * worktree shares the repository's object store, so it costs only the checked-out files.
 * Throws when the id is malformed, or when git cannot make the worktree (the directory or
 * the branch already exists, the disk is full), with git's reason in the message.
 */
export async function createWorkspace(repo: Repository, options: CreateWorkspaceOptions): Promise<Workspace> {
  const { id } = options;
  if (!ID_PATTERN.test(id) || id.includes('..') || id.endsWith('.lock') || id.endsWith('.')) {
    throw new Error(
      `A workspace id names a branch and a directory: letters, digits, '.', '_' and '-', starting with a letter or digit, without '..' and not ending in '.' or '.lock'; got ${JSON.stringify(id)}`,
    );
  }
  const path = resolve(options.parentDir, id);
  const branch = workspaceBranch(id);
  if (await pathExists(path)) throw new Error(`Cannot create workspace ${id}: ${path} already exists.`);
  await mkdir(resolve(options.parentDir), { recursive: true });
  // The commit, not the branch name: the trunk may move meanwhile, and baseCommit must be
  // exactly what was checked out.
  const baseCommit = await resolveBranch(repo, repo.trunk);
  const args = ['worktree', 'add', '--quiet', '-b', branch, path, baseCommit];
  const result = await withWorktreeAdminLock(repo, () => runGit(repo.root, args));
  if (result.code !== 0) throw new Error(`Cannot create workspace ${id}: ${describeFailure(args, result)}`);
  return { id, path, branch, baseCommit };
}

/**
 * Removes a workspace's worktree with `git worktree remove --force`, uncommitted changes and
 * all, so call it only for a workspace whose work has landed or is not wanted (see
 * `unmergedWork`). The directory is never deleted any other way: when git refuses (the
 * worktree's `.git` is missing or was replaced, so git cannot vouch for what it holds), the
 * directory and the branch are both kept. Works when the directory is already gone. Deletes
 * the branch only when asked, and then only when the trunk contains it unless forced. Never
 * throws for what git or the disk does: whatever was kept comes back with the reason.
 */
export function removeWorkspace(repo: Repository, workspace: Workspace, options: RemoveWorkspaceOptions): Promise<RemoveWorkspaceResult> {
  return withWorktreeAdminLock(repo, () => removeWorktreeAndBranch(repo, workspace, options));
}

function kept(reason: string): RemoveWorkspaceResult {
  return { removed: false, reason };
}

function branchKept(workspace: Workspace, why: string): RemoveWorkspaceResult {
  return kept(`The worktree at ${workspace.path} is gone, but the branch ${workspace.branch} was kept: ${why}`);
}

async function removeWorktreeAndBranch(repo: Repository, workspace: Workspace, options: RemoveWorkspaceOptions): Promise<RemoveWorkspaceResult> {
  if (await pathExists(workspace.path)) {
    const args = ['worktree', 'remove', '--force', '--force', workspace.path];
    const removed = await runGit(repo.root, args);
    if (removed.code !== 0) {
      return kept(
        `The workspace at ${workspace.path} was kept, with its branch ${workspace.branch}: git would not remove it, so what it holds is unknown. ${describeFailure(args, removed)}. Look at what it holds, then delete it by hand.`,
      );
    }
  } else {
    // The directory is gone already; only git's record of the worktree is left to drop.
    const args = ['worktree', 'prune'];
    const pruned = await runGit(repo.root, args);
    if (pruned.code !== 0) {
      return kept(`git's record of the workspace ${workspace.id} and its branch ${workspace.branch} were kept: ${describeFailure(args, pruned)}`);
    }
  }
  if (!options.deleteBranch) return { removed: true };
  return deleteBranch(repo, workspace, options.forceDeleteBranch === true);
}

/** Deletes the workspace's branch if the trunk contains it (or `force`), with a compare-and-swap so a moved branch is never lost. */
async function deleteBranch(repo: Repository, workspace: Workspace, force: boolean): Promise<RemoveWorkspaceResult> {
  const ref = `refs/heads/${workspace.branch}`;
  const tipArgs = ['rev-parse', '--verify', '--quiet', ref];
  const tip = await runGit(repo.root, tipArgs);
  const commit = tip.stdout.trim();
  // --verify --quiet exits 1 and prints nothing for a branch that does not exist.
  if (tip.code === 1 && commit === '') return { removed: true };
  if (tip.code !== 0 || commit === '') return branchKept(workspace, describeFailure(tipArgs, tip));
  if (!force) {
    const ahead = await countCommitsAhead(repo.root, repo.trunk, [commit]);
    if (!ahead.ok) return branchKept(workspace, `could not tell whether ${repo.trunk} contains it. ${ahead.error}`);
    if (ahead.count > 0) {
      return branchKept(
        workspace,
        `${repo.trunk} does not contain ${ahead.count} of its commits. Land them, or delete the branch by hand (git branch -D ${workspace.branch}) if they are not wanted.`,
      );
    }
  }
  const deleteArgs = ['update-ref', '-d', ref, commit];
  const deleted = await runGit(repo.root, deleteArgs);
  if (deleted.code !== 0) return branchKept(workspace, describeFailure(deleteArgs, deleted));
  return { removed: true };
}

/**
 * Marks a workspace colony keeps because it holds work that did not land: git then never
 * prunes its record (which holds its index and HEAD), even if its folder goes missing for a
 * while. `git worktree unlock <path>` undoes it. Failing to lock is reported, not thrown.
 */
export function keepWorkspace(repo: Repository, workspace: Workspace, reason: string): Promise<{ readonly locked: boolean; readonly error?: string }> {
  return withWorktreeAdminLock(repo, async () => {
    const args = ['worktree', 'lock', '--reason', reason.replace(/\s+/g, ' ').slice(0, 500), workspace.path];
    const result = await runGit(repo.root, args);
    if (result.code === 0 || /already locked/.test(result.stderr)) return { locked: true };
    return { locked: false, error: describeFailure(args, result) };
  });
}
