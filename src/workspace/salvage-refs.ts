import { countCommitsAhead } from './git/commits-ahead.js';
import { describeFailure, runGit } from './git/git.js';
import type { Repository } from './git/repository.js';
import { createRef, SALVAGE_REFS, salvageRefFor } from './workspace-branch.js';

/** A salvage ref and the commit it holds. */
export interface SalvageRef {
  readonly ref: string;
  readonly commit: string;
}

export type SalvageRefsResult = { readonly ok: true; readonly refs: readonly SalvageRef[] } | { readonly ok: false; readonly error: string };

/** Every ref under `SALVAGE_REFS`, in git's order. */
export async function listSalvageRefs(repo: Repository): Promise<SalvageRefsResult> {
  const args = ['for-each-ref', '--format=%(refname) %(objectname)', SALVAGE_REFS];
  const listed = await runGit(repo.root, args);
  if (listed.code !== 0) return { ok: false, error: `colony could not list its salvage refs: ${describeFailure(args, listed)}` };
  const refs = listed.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [ref = '', commit = ''] = line.trim().split(' ');
      return { ref, commit };
    });
  return { ok: true, refs };
}

/**
 * Deletes every salvage ref, each by compare-and-swap on the commit it was listed at, so one
 * that moved meanwhile is kept. The work they held is then gone from colony's refs: only for
 * when the user has looked at it, or does not want it. Never throws for what git does.
 */
export async function pruneSalvageRefs(repo: Repository): Promise<{ readonly pruned: string[]; readonly problems: string[] }> {
  const listed = await listSalvageRefs(repo);
  if (!listed.ok) return { pruned: [], problems: [listed.error] };
  const pruned: string[] = [];
  const problems: string[] = [];
  for (const { ref, commit } of listed.refs) {
    const args = ['update-ref', '-d', ref, commit];
    const deleted = await runGit(repo.root, args);
    if (deleted.code === 0) pruned.push(ref);
    else problems.push(`${ref} was kept: ${describeFailure(args, deleted)}`);
  }
  return { pruned, problems };
}

export type KeptBranch =
  | { readonly ok: true; readonly deleted: boolean; readonly salvageRef: string | null }
  | { readonly ok: false; readonly error: string };

/**
 * Takes a workspace's branch out of the user's branch list without losing a commit: commits
 * main lacks are first kept under the branch's salvage ref (`salvageRefFor`), then the branch
 * is deleted by compare-and-swap. A branch that is gone already is fine. When its salvage ref
 * is taken by other work, the branch is kept and the error says so. Never throws.
 */
export async function keepBranchAsSalvage(repo: Repository, branch: string, why: string): Promise<KeptBranch> {
  const ref = `refs/heads/${branch}`;
  const tip = await runGit(repo.root, ['rev-parse', '--verify', '--quiet', ref]);
  const commit = tip.stdout.trim();
  if (tip.code === 1 && commit === '') return { ok: true, deleted: false, salvageRef: null };
  if (tip.code !== 0 || commit === '') return { ok: false, error: `the branch ${branch} could not be read: ${describeFailure(['rev-parse', ref], tip)}` };
  const ahead = await countCommitsAhead(repo.root, repo.mainBranch, [commit, '--not', `--glob=${SALVAGE_REFS}*`]);
  if (!ahead.ok) return { ok: false, error: `the branch ${branch} was kept: ${ahead.error}` };
  let salvageRef: string | null = null;
  if (ahead.count > 0) {
    salvageRef = salvageRefFor(branch);
    const created = await createRef(repo, salvageRef, commit, why);
    if (!created.ok) {
      const reason = created.error === 'taken' ? `${salvageRef} holds other work already` : created.error;
      return { ok: false, error: `the branch ${branch} was kept, with ${ahead.count} commit(s) ${repo.mainBranch} lacks: ${reason}` };
    }
  }
  const deleteArgs = ['update-ref', '-d', ref, commit];
  const deleted = await runGit(repo.root, deleteArgs);
  if (deleted.code !== 0) return { ok: false, error: `the branch ${branch} was kept: ${describeFailure(deleteArgs, deleted)}` };
  return { ok: true, deleted: true, salvageRef };
}
