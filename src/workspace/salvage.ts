import { countCommitsAhead } from './git/commits-ahead.js';
import { describeFailure, runGit, splitNul } from './git/git.js';
import { readRebaseState } from './git/rebase-state.js';
import type { Repository } from './git/repository.js';
import type { Workspace } from './workspace.js';
import { createRef, salvageRefFor } from './workspace-branch.js';

/**
 * What salvaging a workspace kept. `commit` is the commit colony made of the uncommitted
 * files (null when there were none); `branch` is the salvage ref (under `SALVAGE_REFS`) that
 * holds every commit the workspace's branch made; `sideBranch`, when not null, holds work that
 * was not on that branch (a rebase stopped half-way, or a HEAD the agent moved off its branch):
 * a salvage ref too, or a branch the agent made itself.
 */
export type SalvageOutcome =
  | {
      readonly ok: true;
      readonly commit: string | null;
      readonly files: readonly string[];
      readonly branch: string;
      readonly sideBranch: string | null;
    }
  | { readonly ok: false; readonly error: string };

/**
 * Saves everything a workspace holds that did not land, so the workspace itself can be removed:
 * uncommitted and untracked files (ignored ones aside) are committed where HEAD is, with a
 * message saying they were salvaged and why; the branch's commits are kept under a salvage ref
 * (so the branch can be deleted with the workspace, and the user's branch list holds none of
 * colony's), and commits that would otherwise be reachable from nothing get a salvage ref of
 * their own. Nothing is pushed to main. Never throws: when git fails the outcome says why, and
 * the workspace should be kept.
 */
export async function salvageWorkspace(repo: Repository, workspace: Workspace, why: string): Promise<SalvageOutcome> {
  const cwd = workspace;
  const fail = (args: readonly string[], result: Awaited<ReturnType<typeof runGit>>): SalvageOutcome => ({
    ok: false,
    error: `Could not salvage the workspace at ${workspace.path}: ${describeFailure(args, result)}`,
  });
  const rebasing = (await readRebaseState(cwd).catch(() => null)) !== null;
  const addArgs = ['add', '--all'];
  const added = await runGit(cwd, addArgs);
  if (added.code !== 0) return fail(addArgs, added);
  const stagedArgs = ['diff', '--no-ext-diff', '--no-textconv', '--cached', '--name-only', '-z', '--no-renames', 'HEAD'];
  const staged = await runGit(cwd, stagedArgs);
  if (staged.code !== 0) return fail(stagedArgs, staged);
  const files = splitNul(staged.stdout);
  let commit: string | null = null;
  if (files.length > 0) {
    const message = [
      `colony salvaged the uncommitted work of workspace ${workspace.id}`,
      '',
      why.trim(),
      '',
      `${rebasing ? 'A rebase onto main was stopped at a conflict; these files are as the agent left them, conflict markers and all.\n' : ''}Files: ${files.slice(0, 50).join(', ')}${files.length > 50 ? `, and ${files.length - 50} more` : ''}`,
    ].join('\n');
    const commitArgs = ['commit', '--quiet', '--no-verify', '-m', message];
    const committed = await runGit(cwd, commitArgs);
    if (committed.code !== 0) return fail(commitArgs, committed);
    const headArgs = ['rev-parse', '--verify', 'HEAD'];
    const head = await runGit(cwd, headArgs);
    if (head.code !== 0) return fail(headArgs, head);
    commit = head.stdout.trim();
  }
  const sideBranch = await keepDetachedWork(repo, workspace, rebasing && commit === null);
  if (typeof sideBranch === 'object' && sideBranch !== null) return sideBranch;
  // The branch's commits are kept under a salvage ref, so the branch itself can go with the workspace.
  const ref = salvageRefFor(workspace.branch);
  const keepArgs = ['update-ref', '--create-reflog', '-m', `colony salvaged workspace ${workspace.id}`, ref, `refs/heads/${workspace.branch}`];
  const kept = await runGit(repo.root, keepArgs);
  if (kept.code !== 0) return fail(keepArgs, kept);
  return { ok: true, commit, files, branch: ref, sideBranch };
}

/**
 * When HEAD is not the workspace's branch, the commits only HEAD reaches would be lost with
 * the workspace: they get a salvage ref of their own, `<branch's salvage ref>-salvaged`
 * (numbered when taken). A stopped rebase with nothing new only holds copies of the branch's
 * own commits, so it needs none. A branch the agent made and left HEAD on keeps them already.
 */
async function keepDetachedWork(repo: Repository, workspace: Workspace, copiesOnly: boolean): Promise<string | null | { ok: false; error: string }> {
  const cwd = workspace;
  const symbolic = await runGit(cwd, ['symbolic-ref', '--quiet', 'HEAD']);
  const headRef = symbolic.stdout.trim();
  if (symbolic.code === 0 && headRef === `refs/heads/${workspace.branch}`) return null;
  // On another branch the agent made: that branch keeps the work.
  if (symbolic.code === 0 && headRef.startsWith('refs/heads/')) return headRef.slice('refs/heads/'.length);
  if (copiesOnly) return null;
  const head = (await runGit(cwd, ['rev-parse', '--verify', 'HEAD'])).stdout.trim();
  const ahead = await countCommitsAhead(cwd, repo.mainBranch, [head, `^refs/heads/${workspace.branch}`]);
  if (!ahead.ok) return { ok: false, error: `Could not tell whether the workspace's HEAD holds work of its own: ${ahead.error}` };
  if (ahead.count === 0) return null;
  const base = `${salvageRefFor(workspace.branch)}-salvaged`;
  for (let attempt = 1; attempt <= 20; attempt += 1) {
    const ref = attempt === 1 ? base : `${base}-${attempt}`;
    const created = await createRef(repo, ref, head, `colony salvaged the detached HEAD of workspace ${workspace.id}`);
    if (created.ok) return ref;
    if (created.error !== 'taken') return { ok: false, error: `Could not keep the commits on the workspace's detached HEAD ${head}: ${created.error}` };
  }
  return { ok: false, error: `Could not keep the commits on the workspace's detached HEAD ${head}: ${base} and its numbered variants are all taken.` };
}
