import { execFile } from 'node:child_process';
import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';
import { readRef } from '../workspace.js';
import { shellWord } from '../../errors/shell-word.js';

/** What `landBranch` did to the user's branch. */
export type LandResult =
  | { readonly ok: true; readonly how: 'up-to-date' | 'fast-forward' | 'merge'; readonly into: string; readonly commit: string; readonly commits: number }
  | { readonly ok: false; readonly error: string };

/**
 * Brings `branch` (a run's trunk) into `into`, the branch checked out in the user's checkout,
 * as the user asked with `colony land`: a fast-forward when `into` has not moved since, else a
 * merge commit made by the user's own git (their name, their config). A merge that conflicts
 * is taken back whole, so nothing changes, and the files are named. Files the user changed
 * that the update would overwrite stop it before anything moves, as git's own merge does.
 */
export async function landBranch(repo: Repository, branch: string, into: string): Promise<LandResult> {
  const head = await runGit(repo.root, ['symbolic-ref', '--quiet', 'HEAD']);
  if (head.code !== 0 || head.stdout.trim() !== `refs/heads/${into}`) {
    return { ok: false, error: `colony land brings the work into the branch checked out in ${repo.root}, and ${into} is not checked out there. Switch to it (\`git switch ${shellWord(into)}\`), then run colony land again.` };
  }
  const tip = await readRef(repo, `refs/heads/${branch}`);
  if (tip === null) return { ok: false, error: `there is no branch ${branch} in ${repo.root} to land: it was deleted or renamed.` };
  const intoCommit = await readRef(repo, `refs/heads/${into}`);
  if (intoCommit === null) return { ok: false, error: `${into} has no commit yet in ${repo.root}.` };
  const count = await runGit(repo.root, ['rev-list', '--count', `${intoCommit}..${tip}`]);
  const commits = Number.parseInt(count.stdout.trim(), 10) || 0;
  if (commits === 0) return { ok: true, how: 'up-to-date', into, commit: intoCommit, commits };
  const forward = (await runGit(repo.root, ['merge-base', '--is-ancestor', intoCommit, tip])).code === 0;
  const args = forward ? ['merge', '--ff-only', '--no-edit', branch] : ['merge', '--no-ff', '--no-edit', '-m', `Merge ${branch}: the work of a colony run`, branch];
  const merged = await userGit(repo.root, args);
  if (merged.code === 0) {
    const after = (await readRef(repo, `refs/heads/${into}`)) ?? tip;
    return { ok: true, how: forward ? 'fast-forward' : 'merge', into, commit: after, commits };
  }
  const conflicted = await conflictedFiles(repo);
  if (conflicted.length > 0) {
    await userGit(repo.root, ['merge', '--abort']);
    return {
      ok: false,
      error:
        `${branch} and ${into} both changed ${conflicted.slice(0, 8).join(', ')}${conflicted.length > 8 ? ', …' : ''}, so they do not merge cleanly; nothing was changed. ` +
        `Merge them yourself (\`git merge ${shellWord(branch)}\`, resolve the conflicts, \`git commit\`), or rebase the run's branch onto ${into} first.`,
    };
  }
  return {
    ok: false,
    error: `git would not bring ${branch} into ${into}, so nothing was changed: ${merged.stderr.trim() || merged.stdout.trim()}. Commit or stash your own changes (git stash) if git names them, then run colony land again.`,
  };
}


async function conflictedFiles(repo: Repository): Promise<string[]> {
  const args = ['diff', '--name-only', '--diff-filter=U', '-z'];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return splitNul(result.stdout);
}

/**
 * git as the user runs it, with their environment and configuration: a merge the user asked
 * for is theirs, made in their name. colony's own calls (`runGit`) use colony's identity.
 */
function userGit(cwd: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', [...args], { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no', LC_ALL: 'C' } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}
