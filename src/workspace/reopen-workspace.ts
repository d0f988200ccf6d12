import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isDirectory, pathExists } from './files/path-exists.js';
import type { Repository } from './git/repository.js';
import { removeStaleLocks } from './git/stale-locks.js';
import type { Workspace } from './workspace.js';
import type { WorkspaceProvider } from './workspace-provider.js';

/**
 * A workspace given back to its agent after a restart: `clearedLocks` are the lock files a
 * killed git left in its git directory, deleted. Otherwise why it cannot be given back.
 */
export type ReopenedWorkspace =
  | { readonly ok: true; readonly workspace: Workspace; readonly clearedLocks: readonly string[] }
  | { readonly ok: false; readonly error: string };

/**
 * The workspace made for `id` under `parentDir` by this provider before a restart, usable again
 * (mount restored, stale locks cleared), or why not.
 *
 * Found with `provider.find`, which mounts an overlay again whose mount went with the machine.
 * What it holds is kept as it is: uncommitted files, commits on its branch, and a rebase
 * stopped at a conflict (the next `mergeToMain` continues it). Only lock files at the top of its
 * own git directory (`index.lock`, `HEAD.lock`, ...) that no live process holds are deleted
 * (see `stale-locks.ts`). Never throws.
 */
export async function reopenWorkspace(provider: WorkspaceProvider, parentDir: string, id: string): Promise<ReopenedWorkspace> {
  const found = await provider.find(parentDir);
  const workspace = found.workspaces.find((candidate) => candidate.id === id);
  if (workspace === undefined) {
    const path = join(resolve(parentDir), id);
    const related = found.problems.filter((problem) => problem.includes(path) || problem.includes(` ${id} `));
    const why = related.length > 0 ? related.join(' ') : `Neither the ${provider.method} method's records nor git know of a workspace ${id} under ${parentDir}.`;
    return { ok: false, error: `The workspace ${id} cannot be reopened: ${why}` };
  }
  if (!(await isDirectory(workspace.path))) {
    return {
      ok: false,
      error: `The workspace ${id} cannot be reopened: its directory ${workspace.path} is gone, and its uncommitted work with it. Commits it made are on the branch ${workspace.branch}.`,
    };
  }
  if (!(await isDirectory(workspace.gitDir))) {
    return { ok: false, error: `The workspace ${id} cannot be reopened: git's record of it, ${workspace.gitDir}, is gone.` };
  }
  const locks = await lockFilesIn(workspace.gitDir);
  const clearedLocks = await removeStaleLocks(locks, [workspace.path, workspace.gitDir]);
  return { ok: true, workspace, clearedLocks };
}

/**
 * Deletes the lock files in the repository's common git directory that no live process holds,
 * and returns their paths: branch locks (any `*.lock` under `refs/heads/`: a git killed during
 * `update-ref` leaves `refs/heads/main.lock`, and every later merge fails on it),
 * `packed-refs.lock`, and the main checkout's `index.lock`. A git at work in the checkout or in
 * any worktree of the repository keeps them all, colony's own long-lived git processes
 * included: call it before this process merges into the repository. Never throws.
 */
export async function clearStaleRefLocks(repo: Repository): Promise<string[]> {
  const gitDir = repo.gitDir;
  const refLocks = await lockFilesBelow(join(gitDir, 'refs', 'heads'));
  const topLocks = [join(gitDir, 'packed-refs.lock'), join(gitDir, 'index.lock')];
  const present = [...refLocks, ...(await Promise.all(topLocks.map(async (lock) => ((await pathExists(lock)) ? lock : null)))).filter((lock) => lock !== null)];
  if (present.length === 0) return [];
  return removeStaleLocks(present, [repo.root, gitDir, ...(await worktreePaths(repo))]);
}

/** The `*.lock` files directly in `dir`. */
async function lockFilesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.lock')).map((entry) => join(dir, entry.name));
}

/** The `*.lock` files anywhere below `dir` (branch names nest: `colony/<id>`). */
async function lockFilesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.lock')).map((entry) => join(entry.parentPath, entry.name));
}

/** The directories of the repository's linked worktrees, from git's own records of them. */
async function worktreePaths(repo: Repository): Promise<string[]> {
  const records = join(repo.gitDir, 'worktrees');
  const names = await readdir(records).catch(() => [] as string[]);
  const paths = await Promise.all(names.map((name) => readFile(join(records, name, 'gitdir'), 'utf8').catch(() => '')));
  return paths.map((path) => path.trim()).filter((path) => path !== '').map((path) => dirname(path));
}
