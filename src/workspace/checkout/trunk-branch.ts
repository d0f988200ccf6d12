import { describeFailure, runGit } from '../git/git.js';
import { readRef } from '../workspace.js';
import { landsOnCheckout, onTrunk, type Repository } from '../git/repository.js';
import { shellWord } from '../../errors/shell-word.js';

/** The trunk a run lands on, as `chooseTrunk` settled it. */
export interface ChosenTrunk {
  /** The repository with its merges landing on the trunk. */
  readonly repo: Repository;
  readonly trunk: string;
  /** True when colony makes (made) the branch for this run; false when it was there already. */
  readonly made: boolean;
  /** The commit the trunk was at when the run took it. */
  readonly commit: string;
}

export type ChooseTrunkResult = { readonly ok: true; readonly chosen: ChosenTrunk } | { readonly ok: false; readonly error: string };

/** The longest goal-derived part of a run branch's name, so `git branch` lines stay readable. */
const SLUG_MAX = 40;

/** How many taken names (`colony/x`, `colony/x-2`, …) are stepped over before giving up. */
const NAME_ATTEMPTS = 100;

/**
 * The trunk a new run lands on, settled but not yet made (see `makeTrunk`). `given`
 * (`--trunk`) is taken as it is: an existing branch, or a new one to make at the checked-out
 * commit. Without it the run gets a branch of its own, `colony/<short goal name>` (`-2`, `-3` …
 * when taken), made at the checked-out commit, so the user's branch and working tree are never
 * moved by the run. Refuses a name git does not take and a branch checked out in another
 * worktree, which landing would leave behind its branch.
 */
export async function chooseTrunk(repo: Repository, given: string | null, goalTitle: string): Promise<ChooseTrunkResult> {
  const head = await readRef(repo, 'HEAD');
  if (head === null) return { ok: false, error: `colony could not read the commit checked out in ${repo.root}.` };
  if (given !== null) {
    const problem = await branchNameProblem(repo, given);
    if (problem !== null) return { ok: false, error: problem };
    const existing = await readRef(repo, `refs/heads/${given}`);
    if (existing === null) return chosen(repo, given, true, head);
    const elsewhere = await checkedOutElsewhere(repo, given);
    if (elsewhere !== null) {
      return {
        ok: false,
        error: `--trunk ${given}: that branch is checked out in ${elsewhere}, and landing work would move it under that checkout. Switch that checkout to another branch (\`git -C ${shellWord(elsewhere)} switch --detach\`) or name another --trunk.`,
      };
    }
    return chosen(repo, given, false, existing);
  }
  const base = `colony/${goalSlug(goalTitle)}`;
  for (let attempt = 1; attempt <= NAME_ATTEMPTS; attempt += 1) {
    const name = attempt === 1 ? base : `${base}-${attempt}`;
    if ((await readRef(repo, `refs/heads/${name}`)) === null) return chosen(repo, name, true, head);
  }
  return { ok: false, error: `colony found ${base} and ${NAME_ATTEMPTS - 1} numbered branches after it already taken. Name the branch to land on with --trunk.` };
}

/**
 * Makes the branch a chosen trunk is to be, where no such branch is (a compare-and-swap on
 * "absent"); nothing to do for a trunk that was there.
 */
export async function makeTrunk(trunk: ChosenTrunk): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  if (!trunk.made) return { ok: true };
  const args = ['update-ref', '--create-reflog', '-m', 'colony: the run lands here', `refs/heads/${trunk.trunk}`, trunk.commit, ''];
  const result = await runGit(trunk.repo.root, args);
  if (result.code === 0) return { ok: true };
  return { ok: false, error: `colony could not make the branch ${trunk.trunk} to land on: ${describeFailure(args, result)}. Run again, or name the branch with --trunk.` };
}

/** The trunk of a run being resumed: the one it recorded, or (recorded before `--trunk`) the branch checked out. */
export async function recordedTrunk(repo: Repository, trunk: string | null): Promise<ChooseTrunkResult> {
  const name = trunk ?? repo.checkedOutBranch;
  const commit = await readRef(repo, `refs/heads/${name}`);
  if (commit === null) {
    return {
      ok: false,
      error: `the run lands on ${name}, and that branch no longer exists in ${repo.root}. Put it back (\`git branch ${shellWord(name)} <commit>\`) to go on, or start over with --new.`,
    };
  }
  return chosen(repo, name, false, commit);
}

/**
 * The green branch of a run that was not given one: `green` beside the branch checked out, as
 * before runs had branches of their own, and `<trunk>-green` beside any other trunk, so runs
 * on different branches never move one green branch back and forth.
 */
export function defaultGreenBranch(repo: Repository): string {
  return landsOnCheckout(repo) ? 'green' : `${repo.mainBranch}-green`;
}

/**
 * A short branch-safe name from a goal's title: lower case, words joined by `-`, at most
 * SLUG_MAX characters cut at a word; `run` when nothing is left.
 */
export function goalSlug(title: string): string {
  const words = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== '');
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word : `${slug}-${word}`;
    if (next.length > SLUG_MAX) break;
    slug = next;
  }
  if (slug === '' && words[0] !== undefined) slug = words[0].slice(0, SLUG_MAX);
  return slug === '' ? 'run' : slug;
}

function chosen(repo: Repository, trunk: string, made: boolean, commit: string): ChooseTrunkResult {
  return { ok: true, chosen: { repo: onTrunk(repo, trunk), trunk, made, commit } };
}

async function branchNameProblem(repo: Repository, name: string): Promise<string | null> {
  const checked = await runGit(repo.root, ['check-ref-format', '--branch', name]);
  if (checked.code === 0 && !name.startsWith('-')) return null;
  return `--trunk ${JSON.stringify(name)} is not a name git takes for a branch. Pass a branch name such as main or colony/my-goal.`;
}


/** The worktree other than the user's checkout where `branch` is checked out, or null. */
async function checkedOutElsewhere(repo: Repository, branch: string): Promise<string | null> {
  const listed = await runGit(repo.root, ['worktree', 'list', '--porcelain']);
  if (listed.code !== 0) return null;
  let path: string | null = null;
  for (const line of listed.stdout.split('\n')) {
    if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
    if (line === `branch refs/heads/${branch}` && path !== null && path !== repo.root) return path;
  }
  return null;
}

/**
 * Deletes the branches colony made for a run that landed nothing on them, so a run that ended
 * without work leaves no empty branch in `git branch`: the trunk when colony made it and it is
 * still where it was made, and the green branch named after it (`defaultGreenBranch`) at that
 * same commit. Each deletion is a compare-and-swap on that commit, so a branch that moved is
 * never lost.
 */
export async function dropUnusedTrunk(trunk: ChosenTrunk): Promise<boolean> {
  if (!trunk.made || (await readRef(trunk.repo, `refs/heads/${trunk.trunk}`)) !== trunk.commit) return false;
  for (const branch of [trunk.trunk, defaultGreenBranch(trunk.repo)]) {
    await runGit(trunk.repo.root, ['update-ref', '-d', `refs/heads/${branch}`, trunk.commit]);
  }
  return true;
}
