import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describeFailure, runGit } from '../git/git.js';
import type { GitWorkTree } from '../git/git.js';
import { pathExists } from '../files/path-exists.js';
import type { Repository } from '../git/repository.js';
import { resolveBranch } from '../workspace.js';
import { checkWorktreeGitFile, findWorktreeAdminDir } from '../git/worktree-admin.js';
import { withWorktreeAdminLock } from '../git/worktree-admin-lock.js';
import { errorMessage } from '../../errors/error-message.js';

/**
 * A read-only look at main: a detached worktree that a planner reads and runs checks in.
 * It has no branch, so nothing made in it can land; `followTrunk` brings it to main's
 * latest commit and drops anything a command changed or left behind (ignored files aside).
 */
export interface MainView {
  readonly path: string;
  /** Main commit the view shows now. */
  readonly commit: () => string;
  /** Moves the view to main's current commit. Returns an error message instead of throwing. */
  followMain(): Promise<string | null>;
  remove(): Promise<void>;
}

/** True when the view is at `commit` with nothing changed or added by a command. */
async function isPristine(view: GitWorkTree, commit: string): Promise<boolean> {
  const head = await runGit(view, ['rev-parse', '--verify', 'HEAD']);
  if (head.code !== 0 || head.stdout.trim() !== commit) return false;
  const status = await runGit(view, ['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=dirty']);
  return status.code === 0 && status.stdout.trim() === '';
}

/**
 * Makes a view at `<parentDir>/<id>` on main's current commit, or on `at` (a commit
 * main reached, such as a worker's merge, to check what main was then). Throws when git cannot.
 */
export async function createMainView(repo: Repository, options: { id: string; parentDir: string; at?: string }): Promise<MainView> {
  const path = resolve(options.parentDir, options.id);
  if (await pathExists(path)) throw new Error(`Cannot create the view ${options.id}: ${path} already exists.`);
  await mkdir(resolve(options.parentDir), { recursive: true });
  let commit = options.at ?? (await resolveBranch(repo, repo.mainBranch));
  // --force: a view whose directory a killed process already deleted may still be registered
  // under the same id; the directory itself is checked above.
  const args = ['worktree', 'add', '--quiet', '--force', '--detach', path, commit];
  const added = await withWorktreeAdminLock(repo, () => runGit(repo.root, args));
  if (added.code !== 0) throw new Error(`Cannot create the view ${options.id}: ${describeFailure(args, added)}`);
  // The planner runs commands in the view, which can rewrite its `.git` file: colony's own git
  // calls there name the git directory found now, from git's records.
  const gitDir = await findWorktreeAdminDir(repo, path, options.id);
  if (gitDir === null) {
    await withWorktreeAdminLock(repo, () => runGit(repo.root, ['worktree', 'remove', '--force', '--force', path]));
    throw new Error(`Cannot create the view ${options.id}: git made the worktree at ${path}, but no record under ${repo.gitDir}/worktrees names it.`);
  }
  const view: GitWorkTree = { path, gitDir };

  return {
    path,
    commit: () => commit,
    async followMain() {
      let latest: string;
      try {
        latest = await resolveBranch(repo, repo.mainBranch);
      } catch (error) {
        return errorMessage(error);
      }
      // A `.git` a command deleted or rewrote is put back, like any other file a command changed.
      if ((await checkWorktreeGitFile(path, gitDir)) !== null) {
        await rm(join(path, '.git'), { recursive: true, force: true });
        await writeFile(join(path, '.git'), `gitdir: ${gitDir}\n`);
      }
      if (latest === commit && (await isPristine(view, commit))) return null;
      const checkout = ['checkout', '--quiet', '--force', '--detach', latest];
      const moved = await runGit(view, checkout);
      if (moved.code !== 0) return describeFailure(checkout, moved);
      // Files a command created (a build, a test's output) would otherwise pile up across moves.
      const clean = ['clean', '-fdq'];
      const cleaned = await runGit(view, clean);
      if (cleaned.code !== 0) return describeFailure(clean, cleaned);
      commit = latest;
      return null;
    },
    async remove() {
      const removeArgs = ['worktree', 'remove', '--force', '--force', path];
      await withWorktreeAdminLock(repo, () => runGit(repo.root, removeArgs));
    },
  };
}

/**
 * Removes every view left under `parentDir` by a process that died with its planners (a
 * crash, a SIGKILL): views hold nothing of their own, so a new run, or a resumed one, makes
 * its planners fresh ones. Call it only while no planner of this state directory runs.
 * Returns the paths removed; never throws for what git or the disk does.
 */
export async function removeLeftoverViews(repo: Repository, parentDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(parentDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const path = resolve(parentDir, name);
    await withWorktreeAdminLock(repo, () => runGit(repo.root, ['worktree', 'remove', '--force', '--force', path]));
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
    if (!(await pathExists(path))) removed.push(path);
  }
  return removed;
}
