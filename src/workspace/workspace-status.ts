import { realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { countCommitsAhead } from './git/commits-ahead.js';
import { readStatus } from './git/git-status.js';
import { isDirectory } from './files/path-exists.js';
import { readRebaseState } from './git/rebase-state.js';
import type { Repository } from './git/repository.js';
import type { Workspace } from './workspace.js';
import { checkWorktreeGitFile } from './git/worktree-admin.js';
import { errorMessage } from '../errors/error-message.js';

/**
 * Why a workspace must be kept; `reason` says it in one sentence either way.
 * - unlanded: it holds work main does not have.
 * - unreadable: git could not tell what it holds (the worktree is damaged, was turned into
 *   another repository, or git failed), so it may hold work and nothing about it is safe to
 *   delete.
 */
export type UnmergedWork =
  | {
      readonly status: 'unlanded';
      readonly reason: string;
      /** Files changed in the workspace but not committed, untracked ones included; a rename under its new name. */
      readonly uncommittedFiles: readonly string[];
      /** Commits on the workspace's branch or its HEAD (each counted once) that main does not contain. */
      readonly unmergedCommits: number;
      /** A rebase stopped at a conflict is still in progress. */
      readonly rebaseInProgress: boolean;
    }
  | { readonly status: 'unreadable'; readonly reason: string };

type Check = { readonly ok: true } | { readonly ok: false; readonly error: string };

function unreadable(reason: string): UnmergedWork {
  return { status: 'unreadable', reason };
}

/**
 * What the workspace holds that has not landed on main, or null when git confirms it
 * holds nothing: no uncommitted or untracked file (ignored files aside), no commit on its
 * branch or on its HEAD that main lacks, no rebase in progress. Whenever that cannot be
 * confirmed the answer is `unreadable`, never null, so a caller that removes workspaces only
 * on null can never delete work it did not see. Never throws.
 */
export async function unmergedWork(repo: Repository, workspace: Workspace): Promise<UnmergedWork | null> {
  try {
    return await readUnmergedWork(repo, workspace);
  } catch (error) {
    const detail = errorMessage(error);
    return unreadable(`Could not read what the workspace at ${workspace.path} holds: ${detail}`);
  }
}

async function readUnmergedWork(repo: Repository, workspace: Workspace): Promise<UnmergedWork | null> {
  const identity = await checkIsWorkspaceWorktree(repo, workspace);
  if (!identity.ok) return unreadable(identity.error);
  const status = await readStatus(workspace, { untracked: true });
  if (!status.ok) return unreadable(`Could not read the status of the workspace at ${workspace.path}: ${status.error}`);
  const ahead = await countCommitsAhead(workspace, repo.mainBranch, ['HEAD', `refs/heads/${workspace.branch}`]);
  if (!ahead.ok) {
    return unreadable(`Could not count the commits of ${workspace.branch} and of the workspace's HEAD that ${repo.mainBranch} lacks: ${ahead.error}`);
  }
  const rebaseInProgress = (await readRebaseState(workspace)) !== null;
  const uncommittedFiles = status.entries.map((entry) => entry.path);
  const unmergedCommits = ahead.count;
  if (uncommittedFiles.length === 0 && unmergedCommits === 0 && !rebaseInProgress) return null;
  const held = [
    ...(uncommittedFiles.length > 0 ? [`${uncommittedFiles.length} uncommitted file(s)`] : []),
    ...(unmergedCommits > 0 ? [`${unmergedCommits} commit(s) not on ${repo.mainBranch}`] : []),
    ...(rebaseInProgress ? ['a rebase stopped at a conflict'] : []),
  ];
  const reason = `The workspace at ${workspace.path} holds ${held.join(', ')}.`;
  return { status: 'unlanded', reason, uncommittedFiles, unmergedCommits, rebaseInProgress };
}

/**
 * Whether the workspace is still what colony made: its directory is there, its git directory is
 * one of `repo`'s worktree records, and its `.git` file still names that directory. colony's
 * own git calls name the git directory explicitly, so a `.git` the agent deleted or replaced
 * (pointing at a repository of its own, or become one) cannot mislead them; but the agent's
 * own commits then went elsewhere, so such a workspace is kept for a person to look at.
 */
async function checkIsWorkspaceWorktree(repo: Repository, workspace: Workspace): Promise<Check> {
  if (!(await isDirectory(workspace.path))) return { ok: false, error: `The workspace directory ${workspace.path} is gone, so git cannot read it.` };
  const [adminReal, recordsReal] = await Promise.all([realpath(workspace.gitDir).catch(() => null), realpath(join(repo.gitDir, 'worktrees')).catch(() => null)]);
  if (adminReal === null || recordsReal === null || dirname(adminReal) !== recordsReal) {
    return { ok: false, error: `git's record of the workspace at ${workspace.path} (${workspace.gitDir}) is gone or is not one of ${repo.root}'s worktrees.` };
  }
  const problem = await checkWorktreeGitFile(workspace.path, workspace.gitDir);
  if (problem !== null) return { ok: false, error: `The workspace at ${workspace.path} is not as colony made it, so the agent's own commits may have gone elsewhere: ${problem}` };
  return { ok: true };
}
