import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describeFailure, runGit } from './git.js';
import { pathExists } from './path-exists.js';
import type { Repository } from './repository.js';
import { resolveBranch } from './workspace.js';
import { withWorktreeAdminLock } from './worktree-admin-lock.js';

/**
 * A read-only look at the trunk: a detached worktree that a planner reads and runs checks in.
 * It has no branch, so nothing made in it can land; `followTrunk` brings it to the trunk's
 * latest commit and drops anything a command changed or left behind (ignored files aside).
 */
export interface MainView {
  readonly path: string;
  /** The trunk commit the view shows now. */
  readonly commit: () => string;
  /** Moves the view to the trunk's current commit. Returns an error message instead of throwing. */
  followTrunk(): Promise<string | null>;
  remove(): Promise<void>;
}

/** True when the view is at `commit` with nothing changed or added by a command. */
async function isPristine(path: string, commit: string): Promise<boolean> {
  const head = await runGit(path, ['rev-parse', '--verify', 'HEAD']);
  if (head.code !== 0 || head.stdout.trim() !== commit) return false;
  const status = await runGit(path, ['status', '--porcelain', '--untracked-files=all']);
  return status.code === 0 && status.stdout.trim() === '';
}

/** Makes a view at `<parentDir>/<id>` on the trunk's current commit. Throws when git cannot. */
export async function createMainView(repo: Repository, options: { id: string; parentDir: string }): Promise<MainView> {
  const path = resolve(options.parentDir, options.id);
  if (await pathExists(path)) throw new Error(`Cannot create the view ${options.id}: ${path} already exists.`);
  await mkdir(resolve(options.parentDir), { recursive: true });
  let commit = await resolveBranch(repo, repo.trunk);
  const args = ['worktree', 'add', '--quiet', '--detach', path, commit];
  const added = await withWorktreeAdminLock(repo, () => runGit(repo.root, args));
  if (added.code !== 0) throw new Error(`Cannot create the view ${options.id}: ${describeFailure(args, added)}`);

  return {
    path,
    commit: () => commit,
    async followTrunk() {
      let latest: string;
      try {
        latest = await resolveBranch(repo, repo.trunk);
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      if (latest === commit && (await isPristine(path, commit))) return null;
      const checkout = ['checkout', '--quiet', '--force', '--detach', latest];
      const moved = await runGit(path, checkout);
      if (moved.code !== 0) return describeFailure(checkout, moved);
      // Files a command created (a build, a test's output) would otherwise pile up across moves.
      const clean = ['clean', '-fdq'];
      const cleaned = await runGit(path, clean);
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
