import { countCommitsAhead } from './git/commits-ahead.js';
import { describeFailure, runGit } from './git/git.js';
import type { Repository } from './git/repository.js';
import type { RemoveWorkspaceResult, Workspace } from './workspace.js';

const NO_COMMIT = '0'.repeat(40);

/**
 * Where colony keeps the work of workspaces it removed before that work landed: refs of its
 * own, so they stay out of the user's branch list (`git branch`) and are read with
 * `git log refs/colony/salvaged/<name>`.
 */
export const SALVAGE_REFS = 'refs/colony/salvaged/';

/** The salvage ref for a branch (`colony/worker-x` → `refs/colony/salvaged/worker-x`). */
export function salvageRefFor(branch: string): string {
  return `${SALVAGE_REFS}${branch.replace(/^colony\//, '')}`;
}

/**
 * Creates `refs/heads/<branch>` at `commit`, only if no such branch exists (a compare-and-swap
 * against "absent"), with a reflog entry as `git branch` would write. Returns git's reason on failure.
 */
export async function createBranch(repo: Repository, branch: string, commit: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const created = await createRef(repo, `refs/heads/${branch}`, commit, `branch: Created from ${commit}`);
  return created.ok || created.error !== 'taken' ? created : { ok: false, error: `a branch named '${branch}' already exists` };
}

/**
 * Creates `ref` at `commit`, only if no such ref exists (a compare-and-swap against "absent"),
 * with a reflog entry saying `why`. The error is `taken` when the ref exists, else git's reason.
 */
export async function createRef(repo: Repository, ref: string, commit: string, why: string): Promise<{ ok: true } | { ok: false; error: string }> {
  const args = ['update-ref', '--create-reflog', '-m', why, ref, commit, NO_COMMIT];
  const result = await runGit(repo.root, args);
  if (result.code === 0) return { ok: true };
  if (/already exists|unable to lock|reference already/i.test(result.stderr)) return { ok: false, error: 'taken' };
  return { ok: false, error: describeFailure(args, result) };
}

function branchKept(workspace: Workspace, why: string): RemoveWorkspaceResult {
  return { removed: false, reason: `The workspace at ${workspace.path} is gone, but the branch ${workspace.branch} was kept: ${why}` };
}

/**
 * Deletes the workspace's branch if its commits are kept elsewhere, in main or under colony's
 * salvage refs (see `SALVAGE_REFS`), or with `force`; with a compare-and-swap on the ref so a
 * branch that moved meanwhile is never lost. A branch that is already gone counts as deleted.
 * Never throws for what git does.
 */
export async function deleteWorkspaceBranch(repo: Repository, workspace: Workspace, force: boolean): Promise<RemoveWorkspaceResult> {
  const ref = `refs/heads/${workspace.branch}`;
  const tipArgs = ['rev-parse', '--verify', '--quiet', ref];
  const tip = await runGit(repo.root, tipArgs);
  const commit = tip.stdout.trim();
  // --verify --quiet exits 1 and prints nothing for a branch that does not exist.
  if (tip.code === 1 && commit === '') return { removed: true };
  if (tip.code !== 0 || commit === '') return branchKept(workspace, describeFailure(tipArgs, tip));
  if (!force) {
    const ahead = await countCommitsAhead(repo.root, repo.mainBranch, [commit, '--not', `--glob=${SALVAGE_REFS}*`]);
    if (!ahead.ok) return branchKept(workspace, `could not tell whether ${repo.mainBranch} contains it. ${ahead.error}`);
    if (ahead.count > 0) {
      return branchKept(
        workspace,
        `${repo.mainBranch} does not contain ${ahead.count} of its commits. Land them, or delete the branch by hand (git branch -D ${workspace.branch}) if they are not wanted.`,
      );
    }
  }
  const deleteArgs = ['update-ref', '-d', ref, commit];
  const deleted = await runGit(repo.root, deleteArgs);
  if (deleted.code !== 0) return branchKept(workspace, describeFailure(deleteArgs, deleted));
  return { removed: true };
}
