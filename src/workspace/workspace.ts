import { describeFailure, runGit } from './git/git.js';
import type { Repository } from './git/repository.js';

/** How a workspace's files are made: a full checkout per workspace, or an overlay mount on a shared one. */
export type WorkspaceMethod = 'worktree' | 'overlay';

/**
 * One agent's own copy of the repository. Whatever the method, git sees a linked worktree on
 * its own branch: its own index and HEAD, a `.git` file naming `<common git dir>/worktrees/<id>`.
 * colony's own git calls name `gitDir` explicitly and never follow that `.git` file, which is
 * the agent's to rewrite (see `GitWorkTree`).
 */
export interface Workspace {
  readonly id: string;
  /** Absolute path of the worktree. */
  readonly path: string;
  /** Absolute path of the worktree's own git directory (`<common git dir>/worktrees/<name>`), as found when it was made. */
  readonly gitDir: string;
  /** Always `colony/<id>`. */
  readonly branch: string;
  /** Main commit the workspace was made from. */
  readonly baseCommit: string;
  /** How its files were made; absent on records written before there was a choice (a worktree). */
  readonly method?: WorkspaceMethod;
}

export interface CreateWorkspaceOptions {
  /** Names the branch and the directory; letters, digits, '.', '_' and '-'. */
  readonly id: string;
  /** The directory the worktree is made in, as `<parentDir>/<id>`; created if missing. */
  readonly parentDir: string;
  /**
   * Directories whose contents appear at the workspace's root, shared by every workspace and
   * never written through it (a prepared `node_modules`, say). When two layers hold the same
   * path, the earlier one in the list wins; a layer's file also hides the checkout's file at
   * that path. Meant for content the project ignores: anything else shows up in `git status`.
   */
  readonly sharedLayers?: readonly string[];
  /**
   * More shared layers, chosen for the commit the workspace starts from (main's, read as it
   * is made): the dependencies installed for that commit's package.json, say. They come after
   * `sharedLayers`.
   */
  readonly layersFor?: (baseCommit: string) => Promise<readonly string[]>;
}

export interface RemoveWorkspaceOptions {
  /**
   * Also delete the `colony/<id>` branch, but only when main contains every commit on
   * it; otherwise the branch is kept so its commits stay reachable.
   */
  readonly deleteBranch: boolean;
  /**
   * With `deleteBranch`, delete the branch even when main lacks some of its commits.
   * Those commits are then unreachable and lost once git collects garbage.
   */
  readonly forceDeleteBranch?: boolean;
}

/**
 * How a removal ended. `removed`: the workspace is gone, and the branch too when that was
 * asked. Otherwise something was kept; `reason` says what, why, and what to do.
 */
export type RemoveWorkspaceResult = { readonly removed: true } | { readonly removed: false; readonly reason: string };

/** How keeping a workspace ended: `locked` when git will never prune its record. */
export interface KeepWorkspaceResult {
  readonly locked: boolean;
  readonly error?: string;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Throws unless `id` is safe as a branch name component and a directory name. */
export function checkWorkspaceId(id: string): void {
  if (!ID_PATTERN.test(id) || id.includes('..') || id.endsWith('.lock') || id.endsWith('.')) {
    throw new Error(
      `A workspace id names a branch and a directory: letters, digits, '.', '_' and '-', starting with a letter or digit, without '..' and not ending in '.' or '.lock'; got ${JSON.stringify(id)}`,
    );
  }
}

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

/** The commit a ref points at, or null when it does not exist; throws when git cannot tell. */
export async function readRef(repo: Repository, ref: string): Promise<string | null> {
  const args = ['rev-parse', '--verify', '--quiet', ref];
  const result = await runGit(repo.root, args);
  const commit = result.stdout.trim();
  // --verify --quiet exits 1 and prints nothing for a ref that does not exist.
  if (result.code === 1 && commit === '') return null;
  if (result.code !== 0 || commit === '') throw new Error(describeFailure(args, result));
  return commit;
}
