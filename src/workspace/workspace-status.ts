import { realpath } from 'node:fs/promises';
import { countCommitsAhead } from './commits-ahead.js';
import { describeFailure, runGit } from './git.js';
import { readStatus } from './git-status.js';
import { readRebaseState } from './rebase-state.js';
import type { Repository } from './repository.js';
import type { Workspace } from './workspace.js';

/**
 * Why a workspace must be kept; `reason` says it in one sentence either way.
 * - unlanded: it holds work the trunk does not have.
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
      /** Commits on the workspace's branch or its HEAD (each counted once) that the trunk does not contain. */
      readonly unmergedCommits: number;
      /** A rebase stopped at a conflict is still in progress. */
      readonly rebaseInProgress: boolean;
    }
  | { readonly status: 'unreadable'; readonly reason: string };

type Check = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function unreadable(reason: string): UnmergedWork {
  return { status: 'unreadable', reason };
}

/**
 * What the workspace holds that has not landed on the trunk, or null when git confirms it
 * holds nothing: no uncommitted or untracked file (ignored files aside), no commit on its
 * branch or on its HEAD that the trunk lacks, no rebase in progress. Whenever that cannot be
 * confirmed the answer is `unreadable`, never null, so a caller that removes workspaces only
 * on null can never delete work it did not see. Never throws.
 */
export async function unmergedWork(repo: Repository, workspace: Workspace): Promise<UnmergedWork | null> {
  try {
    return await readUnmergedWork(repo, workspace);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return unreadable(`Could not read what the workspace at ${workspace.path} holds: ${detail}`);
  }
}

async function readUnmergedWork(repo: Repository, workspace: Workspace): Promise<UnmergedWork | null> {
  const identity = await checkIsWorkspaceWorktree(repo, workspace);
  if (!identity.ok) return unreadable(identity.reason);
  const status = await readStatus(workspace.path, { untracked: true });
  if (!status.ok) return unreadable(`Could not read the status of the workspace at ${workspace.path}: ${status.error}`);
  const ahead = await countCommitsAhead(workspace.path, repo.trunk, ['HEAD', `refs/heads/${workspace.branch}`]);
  if (!ahead.ok) {
    return unreadable(`Could not count the commits of ${workspace.branch} and of the workspace's HEAD that ${repo.trunk} lacks: ${ahead.error}`);
  }
  const rebaseInProgress = (await readRebaseState(workspace.path)) !== null;
  const uncommittedFiles = status.entries.map((entry) => entry.path);
  const unmergedCommits = ahead.count;
  if (uncommittedFiles.length === 0 && unmergedCommits === 0 && !rebaseInProgress) return null;
  const held = [
    ...(uncommittedFiles.length > 0 ? [`${uncommittedFiles.length} uncommitted file(s)`] : []),
    ...(unmergedCommits > 0 ? [`${unmergedCommits} commit(s) not on ${repo.trunk}`] : []),
    ...(rebaseInProgress ? ['a rebase stopped at a conflict'] : []),
  ];
  const reason = `The workspace at ${workspace.path} holds ${held.join(', ')}.`;
  return { status: 'unlanded', reason, uncommittedFiles, unmergedCommits, rebaseInProgress };
}

/**
 * Whether git, run in the workspace, reads the workspace itself as a worktree of `repo`. An
 * agent can delete or replace the worktree's `.git` file; git then walks up to whatever
 * repository encloses the directory (the user's checkout, when workspaces live inside it) or
 * reads a repository made in its place, and that status says nothing about the workspace.
 */
async function checkIsWorkspaceWorktree(repo: Repository, workspace: Workspace): Promise<Check> {
  const args = ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'];
  const paths = await runGit(workspace.path, args);
  const [topLevel = '', commonDir = ''] = paths.stdout.split('\n');
  if (paths.code !== 0 || topLevel === '' || commonDir === '') {
    return { ok: false, reason: `git cannot read the workspace at ${workspace.path} as a repository: ${describeFailure(args, paths)}` };
  }
  const [workspaceReal, topLevelReal, commonDirReal, repoGitDirReal] = await Promise.all(
    [workspace.path, topLevel, commonDir, repo.gitDir].map((path) => realpath(path)),
  );
  if (topLevelReal !== workspaceReal) {
    return {
      ok: false,
      reason: `git in ${workspace.path} reads the checkout at ${topLevel}, not the workspace: the workspace's .git file is missing or does not belong to this workspace.`,
    };
  }
  if (commonDirReal !== repoGitDirReal) {
    return {
      ok: false,
      reason: `The workspace at ${workspace.path} belongs to another repository (git directory ${commonDir}), not to ${repo.root}: its .git was replaced.`,
    };
  }
  return { ok: true };
}
