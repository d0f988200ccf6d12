import { mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
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
  /** Also delete the `colony/<id>` branch; by default it is kept so its commits stay reachable. */
  readonly deleteBranch: boolean;
}

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
 * Removes a workspace's worktree, uncommitted changes and all, and prunes git's record of
 * it. Works when the directory is already gone. Keeps the branch unless asked to delete it.
 */
export function removeWorkspace(repo: Repository, workspace: Workspace, options: RemoveWorkspaceOptions): Promise<void> {
  return withWorktreeAdminLock(repo, () => removeWorktreeAndBranch(repo, workspace, options));
}

async function removeWorktreeAndBranch(repo: Repository, workspace: Workspace, options: RemoveWorkspaceOptions): Promise<void> {
  if (await pathExists(workspace.path)) {
    const args = ['worktree', 'remove', '--force', '--force', workspace.path];
    const removed = await runGit(repo.root, args);
    // git refuses some worktrees it cannot recognise any more (a damaged .git file); the
    // directory is colony's own, so deleting it and pruning gets to the same place.
    if (removed.code !== 0) await rm(workspace.path, { recursive: true, force: true });
  }
  const pruneArgs = ['worktree', 'prune'];
  const pruned = await runGit(repo.root, pruneArgs);
  if (pruned.code !== 0) throw new Error(`Cannot prune workspace ${workspace.id}: ${describeFailure(pruneArgs, pruned)}`);
  if (!options.deleteBranch) return;
  const deleteArgs = ['branch', '--delete', '--force', workspace.branch];
  const deleted = await runGit(repo.root, deleteArgs);
  const alreadyGone = /not found/.test(deleted.stderr);
  if (deleted.code !== 0 && !alreadyGone) {
    throw new Error(`Cannot delete the branch of workspace ${workspace.id}: ${describeFailure(deleteArgs, deleted)}`);
  }
}
