import { join } from 'node:path';
import { describeFailure, runGit, splitNul } from '../git/git.js';
import { pathExists } from '../files/path-exists.js';
import type { Repository } from '../git/repository.js';
import { resolveBranch } from '../workspace.js';
import { errorMessage } from '../../errors/error-message.js';

export type UpdateCheckoutResult = { readonly ok: true; readonly commit: string } | { readonly ok: false; readonly error: string };

async function nulList(root: string, args: readonly string[]): Promise<string[]> {
  const result = await runGit(root, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return splitNul(result.stdout);
}

/**
 * The files the update would have to overwrite although the user changed them: tracked
 * files edited or staged since `fromCommit`, and untracked files where the update brings a
 * new file. Used to name them all; git's own refusal names only the first.
 */
async function filesInTheWay(repo: Repository, fromCommit: string, toCommit: string): Promise<string[]> {
  const incoming = await nulList(repo.root, ['diff', '--name-only', '--no-renames', '-z', fromCommit, toCommit]);
  const staged = await nulList(repo.root, ['diff-index', '--cached', '--name-only', '-z', fromCommit]);
  const edited = await nulList(repo.root, ['diff-files', '--name-only', '-z']);
  const tracked = new Set(await nulList(repo.root, ['ls-files', '-z']));
  const local = new Set([...staged, ...edited]);
  const inTheWay: string[] = [];
  for (const file of incoming) {
    if (local.has(file) || (!tracked.has(file) && (await pathExists(join(repo.root, file))))) inTheWay.push(file);
  }
  return inTheWay;
}

/**
 * Brings the user's checkout up to main's current commit after colony moved main
 * underneath it. `fromCommit` is the commit the checkout's index and files were last at
 * (main when colony started, or the commit a previous update returned). A two-way merge
 * (`git read-tree -m -u`) updates only what changed between the two commits and carries the
 * user's own edits along; if an edit is to a file the update changes, nothing is touched and
 * the result lists the files. Never throws: whatever git reports comes back as an error.
 */
export async function updateCheckout(repo: Repository, fromCommit: string, options: { readonly umask?: number } = {}): Promise<UpdateCheckoutResult> {
  try {
    return await twoWayUpdate(repo, fromCommit, options.umask);
  } catch (error) {
    const reason = errorMessage(error);
    return { ok: false, error: `The checkout at ${repo.root} could not be updated to ${repo.mainBranch}: ${reason}` };
  }
}

async function twoWayUpdate(repo: Repository, fromCommit: string, umask: number | undefined): Promise<UpdateCheckoutResult> {
  const head = await runGit(repo.root, ['symbolic-ref', '--quiet', 'HEAD']);
  if (head.code !== 0 || head.stdout.trim() !== `refs/heads/${repo.mainBranch}`) {
    return {
      ok: false,
      error: `The checkout at ${repo.root} no longer has ${repo.mainBranch} checked out, so it was left as it is. Switch back to ${repo.mainBranch} to see colony's work there.`,
    };
  }
  const target = await resolveBranch(repo, repo.mainBranch);
  if (target === fromCommit) return { ok: true, commit: target };
  // Fresh stat information, so a file that was only touched does not count as edited.
  await runGit(repo.root, ['update-index', '-q', '--refresh']);
  const readTreeArgs = ['read-tree', '-m', '-u', fromCommit, target];
  const updated = await runGit(repo.root, readTreeArgs, umask === undefined ? {} : { umask });
  if (updated.code === 0) return { ok: true, commit: target };
  const inTheWay = await filesInTheWay(repo, fromCommit, target);
  if (inTheWay.length > 0) {
    return {
      ok: false,
      error: `The checkout at ${repo.root} was not updated to ${repo.mainBranch} (${target.slice(0, 12)}): it has local changes to files the update would overwrite: ${inTheWay.join(', ')}. Nothing was changed. Save your edits to those files elsewhere, put the files back as they were (\`git restore --source=${fromCommit} --staged --worktree -- <files>\`, removing new untracked ones), then update again.`,
    };
  }
  return {
    ok: false,
    error: `The checkout at ${repo.root} was not updated to ${repo.mainBranch} (${target.slice(0, 12)}); nothing was changed. ${describeFailure(readTreeArgs, updated)}`,
  };
}
