import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';
import { shellWord } from '../../errors/shell-word.js';

/** What `advanceGreenBranch` did: `from` is where the branch was (null when colony made it). */
export type GreenAdvance = { ok: true; from: string | null; moved: boolean } | { ok: false; error: string };

export type GreenTag = { ok: true; tag: string } | { ok: false; error: string };

/** The old value `git update-ref` takes for "this ref must not exist yet". */
const ZERO_ID = '0000000000000000000000000000000000000000';

/** How many taken tag numbers `tagGreen` steps over before it gives up. */
const TAG_ATTEMPTS = 20;

/**
 * Moves `refs/heads/<branch>` to the commit `to`, forward only, the way a fast-forward does:
 * makes the branch when it is missing, leaves it when it is there already (`moved` false), and
 * refuses when its commit is not an ancestor of `to`, because a person (or another tool) put
 * it somewhere else and colony will not undo that. The move is a compare-and-swap on the
 * commit read first, so a branch someone moves at the same moment is refused, not overwritten.
 * Refusals come back with a reason that says where the branch is and how to let colony move
 * it again; nothing here throws for what git says.
 */
export async function advanceGreenBranch(repo: Repository, options: { branch: string; to: string }): Promise<GreenAdvance> {
  const { branch } = options;
  const invalid = await greenBranchProblem(repo, branch);
  if (invalid !== null) return { ok: false, error: invalid };
  const to = await resolveCommit(repo, options.to);
  if (to === null) return { ok: false, error: `colony cannot move ${branch} to ${options.to}: no such commit in ${repo.root}.` };
  const ref = `refs/heads/${branch}`;
  const symbolic = await runGit(repo.root, ['symbolic-ref', '--quiet', ref]);
  if (symbolic.code === 0) {
    const target = symbolic.stdout.trim();
    return {
      ok: false,
      error: `${branch} is a symbolic ref to ${target}, so moving it would move ${target}; colony left it. Delete it (\`git symbolic-ref --delete ${ref}\`) and colony makes ${branch} a branch of its own.`,
    };
  }
  const from = await readRef(repo, ref);
  if (!from.ok) return { ok: false, error: from.error };
  if (from.commit === to) return { ok: true, from: to, moved: false };
  if (from.commit !== null) {
    const forward = await isAncestor(repo, from.commit, to);
    if (!forward.ok) return { ok: false, error: forward.error };
    if (!forward.yes) return { ok: false, error: await notForward(repo, branch, from.commit, to) };
  }
  const checkedOut = await checkoutOf(repo, ref);
  if (checkedOut !== null) {
    return {
      ok: false,
      error:
        `The branch ${branch} is checked out in ${checkedOut}; moving it would leave that checkout's files behind the branch, so colony left it ${from.commit === null ? 'unborn' : `at ${short(from.commit)}`}. ` +
        `Switch that checkout to another branch (for example \`git -C ${shellWord(checkedOut)} switch --detach\`) and colony moves ${branch} at its next passing check.`,
    };
  }
  const swapped = await swapRef(repo, { ref, next: to, expected: from.commit, message: `colony: the check passed on ${short(to)}` });
  if (swapped.ok) return { ok: true, from: from.commit, moved: true };
  const now = await readRef(repo, ref);
  const before = from.commit === null ? 'nothing' : short(from.commit);
  if (now.ok && now.commit === from.commit) {
    // Not a race: git could not write the ref (a lock another git holds, a full disk).
    return { ok: false, error: `colony could not move ${branch} from ${before} to ${short(to)}: ${swapped.error}. colony tries again at its next passing check.` };
  }
  const where = now.ok ? (now.commit === null ? 'deleted it' : `moved it to ${short(now.commit)}`) : 'changed it';
  return {
    ok: false,
    error:
      `Something else ${where} while colony was moving ${branch} from ${before} to ${short(to)}, ` +
      `so colony left it as that made it (${swapped.error}). colony tries again at its next passing check.`,
  };
}

/**
 * Tags `commit` as `<prefix>-<n>`, a lightweight tag, with n one more than the highest
 * `<prefix>-<number>` tag there is (1 for the first). An existing tag is never moved: the tag is
 * created only where no ref of that name exists, and a number someone took meanwhile is
 * skipped for the next one.
 */
export async function tagGreen(repo: Repository, options: { prefix: string; commit: string }): Promise<GreenTag> {
  const { prefix } = options;
  const format = await runGit(repo.root, ['check-ref-format', `refs/tags/${prefix}-1`]);
  if (prefix === '' || prefix.startsWith('-') || format.code !== 0) {
    return { ok: false, error: `${JSON.stringify(prefix)} cannot start a tag name: git refuses refs/tags/${prefix}-1. Choose a tag prefix such as "green".` };
  }
  const commit = await resolveCommit(repo, options.commit);
  if (commit === null) return { ok: false, error: `colony cannot tag ${options.commit}: no such commit in ${repo.root}.` };
  const listArgs = ['for-each-ref', '--format=%(refname)', 'refs/tags/'];
  const listed = await runGit(repo.root, listArgs);
  if (listed.code !== 0) return { ok: false, error: describeFailure(listArgs, listed) };
  const numbered = new RegExp(`^refs/tags/${escapeRegExp(prefix)}-(\\d+)$`);
  let highest = 0;
  for (const name of listed.stdout.split('\n')) {
    const digits = numbered.exec(name)?.[1];
    if (digits !== undefined) highest = Math.max(highest, Number(digits));
  }
  let lastError = '';
  for (let number = highest + 1; number <= highest + TAG_ATTEMPTS; number += 1) {
    const tag = `${prefix}-${number}`;
    const made = await swapRef(repo, { ref: `refs/tags/${tag}`, next: commit, expected: null, message: 'colony: green' });
    if (made.ok) return { ok: true, tag };
    lastError = made.error;
    // Taken meanwhile: the next number. Anything else (a lock, a full disk) will not pass by counting on.
    const exists = await readRef(repo, `refs/tags/${tag}`);
    if (!exists.ok || exists.commit === null) break;
  }
  return { ok: false, error: `colony could not tag ${short(commit)} as ${prefix}-<n> from ${prefix}-${highest + 1}: ${lastError}` };
}

/**
 * The commits after `good` up to and including `bad`, oldest first, along the first-parent line
 * (main's own history: one commit per landing, a merge counted as itself), or every
 * first-parent ancestor of `bad` when `good` is null. Throws when git cannot list them.
 */
export async function commitsBetween(repo: Repository, good: string | null, bad: string): Promise<string[]> {
  const range = good === null ? [bad] : [`^${good}`, bad];
  const args = ['rev-list', '--reverse', '--first-parent', '--end-of-options', ...range, '--'];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return result.stdout.split('\n').filter((line) => line !== '');
}

/** The first line of `commit`'s message. Throws when git cannot read the commit. */
export async function commitSubject(repo: Repository, commit: string): Promise<string> {
  const args = ['log', '-1', '--format=%s', '--end-of-options', commit, '--'];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return result.stdout.replace(/\n$/, '');
}

/**
 * Moves `ref` to `next` only when it is at `expected` now (null: only when it does not exist),
 * in one `git update-ref`: git locks the ref and compares under the lock.
 */
async function swapRef(
  repo: Repository,
  swap: { ref: string; next: string; expected: string | null; message: string },
): Promise<{ ok: true } | { ok: false; error: string }> {
  // --no-deref: a symbolic ref is replaced, never followed to the branch it names.
  const args = ['update-ref', '--no-deref', '-m', swap.message, swap.ref, swap.next, swap.expected ?? ZERO_ID];
  const result = await runGit(repo.root, args);
  if (result.code === 0) return { ok: true };
  // git's first line names the problem (`fatal: cannot lock ref …`); advice follows it.
  const first = result.stderr.split('\n').find((line) => line.trim() !== '')?.trim().replace(/\.$/, '');
  return { ok: false, error: first ?? `git update-ref exited ${result.code}` };
}

/** Why `branch` cannot be the green branch (not a name git takes, or main itself), or null when it can. */
export async function greenBranchProblem(repo: Repository, branch: string): Promise<string | null> {
  const checked = branch.startsWith('-') || branch === 'HEAD' ? null : await runGit(repo.root, ['check-ref-format', '--branch', branch]);
  if (checked === null || checked.code !== 0 || checked.stdout.trim() !== branch) {
    return `${JSON.stringify(branch)} is not a branch name git accepts (git check-ref-format --branch). Choose another name for the green branch, such as "green".`;
  }
  if (branch === repo.mainBranch) {
    return `The green branch cannot be ${branch}: that is the branch colony lands work on. Choose another name for the green branch, such as "green".`;
  }
  return null;
}

async function resolveCommit(repo: Repository, revision: string): Promise<string | null> {
  const result = await runGit(repo.root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`]);
  const commit = result.stdout.trim();
  return result.code === 0 && /^[0-9a-f]{40,64}$/.test(commit) ? commit : null;
}

/** The commit `ref` names, or null when there is no such ref. */
async function readRef(repo: Repository, ref: string): Promise<{ ok: true; commit: string | null } | { ok: false; error: string }> {
  const args = ['for-each-ref', '--format=%(objectname) %(refname)', ref];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) return { ok: false, error: describeFailure(args, result) };
  // The pattern also lists refs below it (refs/heads/green/x); only the ref itself counts.
  for (const line of result.stdout.split('\n')) {
    const space = line.indexOf(' ');
    if (space !== -1 && line.slice(space + 1) === ref) return { ok: true, commit: line.slice(0, space) };
  }
  return { ok: true, commit: null };
}

async function isAncestor(repo: Repository, ancestor: string, descendant: string): Promise<{ ok: true; yes: boolean } | { ok: false; error: string }> {
  const args = ['merge-base', '--is-ancestor', ancestor, descendant];
  const result = await runGit(repo.root, args);
  if (result.code === 0 || result.code === 1) return { ok: true, yes: result.code === 0 };
  return { ok: false, error: describeFailure(args, result) };
}

/** Why a branch at `at` cannot move forward to `to`, and what a person can do about it. */
async function notForward(repo: Repository, branch: string, at: string, to: string): Promise<string> {
  const behind = await isAncestor(repo, to, at);
  const subject = await commitSubject(repo, at).catch(() => '');
  const where = `${branch} points at ${short(at)}${subject === '' ? '' : ` ("${subject}")`}`;
  const relation = behind.ok && behind.yes ? `which already comes after ${short(to)}` : `which is not an ancestor of ${short(to)} (the two have diverged)`;
  return (
    `${where}, ${relation}. colony only moves ${branch} forward, so it left it there. ` +
    `To let colony move it again, delete it (\`git branch -D ${branch}\`) or reset it to a commit of main (\`git branch -f ${branch} ${short(to)}\`).`
  );
}

/** The checkout (worktree) that has `ref` checked out, or null when none has. */
async function checkoutOf(repo: Repository, ref: string): Promise<string | null> {
  const result = await runGit(repo.root, ['worktree', 'list', '--porcelain', '-z']);
  if (result.code !== 0) return null;
  let path: string | null = null;
  for (const line of splitNul(result.stdout)) {
    if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
    else if (line === `branch ${ref}`) return path;
  }
  return null;
}

function short(commit: string): string {
  return commit.slice(0, 12);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
