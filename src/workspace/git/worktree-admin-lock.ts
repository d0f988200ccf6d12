import type { Repository } from './repository.js';
import { createSerialQueue } from './serial-queue.js';

/**
 * Worktree administration (add, remove, prune, branch delete) runs one at a time per
 * repository, keyed by its common git directory.
 *
 * git does not lock `.git/worktrees/` as a whole: while one `git worktree add` is writing a
 * new entry, another one reading every entry (to check that a branch is not checked out
 * twice) fails with "failed to read .git/worktrees/<id>/commondir". Creating and removing
 * workspaces one at a time per repository avoids that. This is process-wide state on
 * purpose: the race is between git processes on one repository, whoever started them, and
 * one clone is driven by one colony process.
 */
const serialize = createSerialQueue();

/** Runs `action` once every earlier worktree administration on `repo` has finished. */
export function withWorktreeAdminLock<T>(repo: Repository, action: () => Promise<T>): Promise<T> {
  return serialize(repo.gitDir, action);
}
