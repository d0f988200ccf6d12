import type { Repository } from './repository.js';

/**
 * Tail of the queue of worktree administration (add, remove, prune, branch delete) per
 * repository, keyed by its common git directory.
 *
 * git does not lock `.git/worktrees/` as a whole: while one `git worktree add` is writing a
 * new entry, another one reading every entry (to check that a branch is not checked out
 * twice) fails with "failed to read .git/worktrees/<id>/commondir". Creating and removing
 * workspaces one at a time per repository avoids that. This is process-wide state on
 * purpose: the race is between git processes on one repository, whoever started them, and
 * one clone is driven by one colony process.
 */
const queues = new Map<string, Promise<void>>();

/** Runs `action` once every earlier worktree administration on `repo` has finished. */
export async function withWorktreeAdminLock<T>(repo: Repository, action: () => Promise<T>): Promise<T> {
  const previous = queues.get(repo.gitDir) ?? Promise.resolve();
  let release = (): void => undefined;
  const current = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => current);
  queues.set(repo.gitDir, tail);
  await previous;
  try {
    return await action();
  } finally {
    release();
    if (queues.get(repo.gitDir) === tail) queues.delete(repo.gitDir);
  }
}
