import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { MergeIntent } from './merge-outcome.js';
import type { Repository } from '../git/repository.js';
import { readRef } from '../workspace.js';

/**
 * How a merge whose process died between recording its intent and recording its end came
 * out: `landed` when main contains the intended commit (`files` changed between main
 * it was based on and that commit), otherwise main never moved for it.
 */
export type InterruptedMergeOutcome =
  | { readonly landed: true; readonly commit: string; readonly files: readonly string[] }
  | { readonly landed: false };

/**
 * Whether any of these intents (newest last) landed: its commit is reachable from main.
 *
 * The intents are the swaps one interrupted `mergeToMain` call announced (a call retries after
 * losing a race, so it can announce several, and at most one of them lands). The newest is
 * looked at first. A commit the repository does not hold any more never landed: git keeps
 * every commit main reaches. Reachability, not equality with main's tip, is what
 * counts, since other merges may have landed on top since.
 *
 * Throws only when git cannot tell (a damaged repository), with git's words.
 */
export async function settleInterruptedMerge(repo: Repository, intents: readonly MergeIntent[]): Promise<InterruptedMergeOutcome> {
  const mainCommit = await readRef(repo, `refs/heads/${repo.mainBranch}`);
  if (mainCommit === null) return { landed: false };
  for (const intent of [...intents].reverse()) {
    if (!(await holdsCommit(repo, intent.commit))) continue;
    const args = ['merge-base', '--is-ancestor', intent.commit, mainCommit];
    const reachable = await runGit(repo.root, args);
    if (reachable.code === 1) continue;
    if (reachable.code !== 0) throw new Error(describeFailure(args, reachable));
    return { landed: true, commit: intent.commit, files: await changedFiles(repo, intent.mainBefore, intent.commit) };
  }
  return { landed: false };
}

async function holdsCommit(repo: Repository, commit: string): Promise<boolean> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) return false;
  return (await runGit(repo.root, ['cat-file', '-e', `${commit}^{commit}`])).code === 0;
}

async function changedFiles(repo: Repository, from: string, to: string): Promise<string[]> {
  const args = ['diff', '--no-ext-diff', '--no-textconv', '--name-only', '--no-renames', '-z', from, to];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return splitNul(result.stdout);
}
