import { resolve } from 'node:path';
import { runGit } from './git.js';
import { pathExists } from './path-exists.js';
import type { Repository } from './repository.js';
import type { Workspace } from './workspace.js';

export interface UnmergedWork {
  /** Files changed in the workspace but not committed. */
  readonly uncommittedFiles: readonly string[];
  /** Commits on the workspace's branch that the trunk does not contain. */
  readonly unmergedCommits: number;
  /** A rebase stopped at a conflict is still in progress. */
  readonly rebaseInProgress: boolean;
}

/**
 * What the workspace holds that has not landed on the trunk, or null when nothing. A workspace
 * with unlanded work must be kept: removing it would lose the work.
 */
export async function unmergedWork(repo: Repository, workspace: Workspace): Promise<UnmergedWork | null> {
  const status = await runGit(workspace.path, ['status', '--porcelain', '--untracked-files=all']);
  const uncommittedFiles = status.stdout
    .split('\n')
    .filter((line) => line.length > 3)
    .map((line) => line.slice(3));
  const ahead = await runGit(workspace.path, ['rev-list', '--count', `refs/heads/${repo.trunk}..HEAD`]);
  const unmergedCommits = ahead.code === 0 ? Number.parseInt(ahead.stdout.trim(), 10) || 0 : 0;
  const rebase = await runGit(workspace.path, ['rev-parse', '--git-path', 'rebase-merge']);
  const rebasePath = rebase.stdout.trim();
  const rebaseInProgress = rebasePath !== '' && (await pathExists(resolve(workspace.path, rebasePath)));
  if (uncommittedFiles.length === 0 && unmergedCommits === 0 && !rebaseInProgress) return null;
  return { uncommittedFiles, unmergedCommits, rebaseInProgress };
}
