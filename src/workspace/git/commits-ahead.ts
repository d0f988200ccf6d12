import { describeFailure, runGit } from './git.js';
import type { GitPlace } from './git.js';

export type CommitCount = { readonly ok: true; readonly count: number } | { readonly ok: false; readonly error: string };

/**
 * How many commits reachable from any of `tips` main does not contain, counting each
 * commit once: `git rev-list --count ^refs/heads/<main> <tips…> --`, run at `place`, so `HEAD`
 * means the HEAD of the worktree there. A tip or main branch that does not resolve, or output that
 * is not a count, is an error, never zero.
 */
export async function countCommitsAhead(place: GitPlace, mainBranch: string, tips: readonly string[]): Promise<CommitCount> {
  if (tips.length === 0) throw new Error('countCommitsAhead needs at least one tip to count from');
  const args = ['rev-list', '--count', `^refs/heads/${mainBranch}`, ...tips, '--'];
  const result = await runGit(place, args);
  if (result.code !== 0) return { ok: false, error: describeFailure(args, result) };
  const printed = result.stdout.trim();
  if (!/^\d+$/.test(printed)) return { ok: false, error: `git ${args.join(' ')} printed ${JSON.stringify(printed)} instead of a count` };
  return { ok: true, count: Number(printed) };
}
