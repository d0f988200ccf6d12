import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describeFailure, runGit } from './git.js';
import { readStatus } from './git-status.js';
import { isDirectory } from '../files/path-exists.js';

/** A git repository colony works on, as found by `openRepository`. */
export interface Repository {
  /** Absolute path of the checkout's top-level directory. */
  readonly root: string;
  /**
   * The run's trunk: the branch colony's merges land on. `openRepository` gives the branch
   * checked out; a run that lands on a branch of its own says so with `onTrunk`.
   */
  readonly mainBranch: string;
  /** The branch checked out in the checkout at `root` when colony opened it (the user's branch). */
  readonly checkedOutBranch: string;
  /** Absolute path of the common git directory, shared by every worktree of the repository. */
  readonly gitDir: string;
  /**
   * Where the trunk lives when it is not here: landings are pushed there, and the trunk here
   * follows it (see `trunk-origin.ts`). Absent: this repository's trunk is the run's.
   */
  readonly origin?: TrunkOrigin | undefined;
}

/**
 * The git repository every host of a run lands on: its trunk there is the run's trunk, and the
 * repository colony works in keeps a copy of it. A push names the tip the work was replayed
 * onto, so it is a compare-and-swap on the origin.
 */
export interface TrunkOrigin {
  /** The URL colony's git calls use, without a password: it is safe to show. */
  readonly url: string;
  /** What only colony's own git calls to the origin get: a password given in the URL. */
  readonly env: Readonly<Record<string, string>>;
}

export type OpenRepositoryResult = { readonly ok: true; readonly repo: Repository } | { readonly ok: false; readonly error: string };

/**
 * Finds the repository that `dir` belongs to and checks colony can work on it: a checkout
 * (not a bare repository) with at least one commit and a branch checked out.
 */
export async function openRepository(dir: string): Promise<OpenRepositoryResult> {
  const directory = resolve(dir);
  if (!(await isDirectory(directory))) {
    return { ok: false, error: `The directory ${directory} does not exist. Pass the path of a git repository with --repo.` };
  }
  const inside = await runGit(directory, ['rev-parse', '--is-inside-work-tree']);
  if (inside.code !== 0) {
    if (/dubious ownership/.test(inside.stderr)) {
      return { ok: false, error: `git refuses to work in ${directory}: ${inside.stderr.trim()}` };
    }
    return {
      ok: false,
      error: `${directory} is not inside a git repository. Run \`git init\` there and make a first commit, or pass the path of an existing repository with --repo.`,
    };
  }
  if (inside.stdout.trim() !== 'true') {
    return {
      ok: false,
      error: `${directory} is a bare repository or a git directory, not a checkout. Pass the path of a checkout (a directory with the project's files) with --repo.`,
    };
  }
  const paths = await runGit(directory, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir']);
  const [root, gitDir] = paths.stdout.split('\n');
  if (paths.code !== 0 || root === undefined || gitDir === undefined || root === '' || gitDir === '') {
    return { ok: false, error: `Could not read the layout of the repository at ${directory}: ${describeFailure(['rev-parse'], paths)}` };
  }
  const head = await runGit(root, ['symbolic-ref', '--quiet', 'HEAD']);
  const headRef = head.stdout.trim();
  if (head.code !== 0 || !headRef.startsWith('refs/heads/')) {
    return {
      ok: false,
      error: `The checkout at ${root} has a detached HEAD, so there is no branch to land work on. Check out the branch to work on (for example \`git switch main\`) and try again.`,
    };
  }
  const mainBranch = headRef.slice('refs/heads/'.length);
  const commit = await runGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (commit.code !== 0) {
    return {
      ok: false,
      error: `The repository at ${root} has no commits yet on ${mainBranch}. Make a first commit (for example \`git commit --allow-empty -m "Start"\`) and try again.`,
    };
  }
  return { ok: true, repo: { root, mainBranch, checkedOutBranch: mainBranch, gitDir } };
}

/** The same repository with its merges landing on `trunk`. */
export function onTrunk(repo: Repository, trunk: string): Repository {
  return { ...repo, mainBranch: trunk };
}

/**
 * Whether the trunk is the branch the user has checked out, so landing moves the branch under
 * their checkout and colony keeps the checkout in step (see `startCheckoutSync`).
 */
export function landsOnCheckout(repo: Repository): boolean {
  return repo.mainBranch === repo.checkedOutBranch;
}

/**
 * Tracked files of the checkout with uncommitted changes, staged or not, as paths relative
 * to its root; a renamed file under its new name. Untracked files do not count: they cannot
 * be lost by moving the branch.
 * Throws when git cannot read the checkout's status at all.
 */
export async function findDirtyFiles(repo: Repository): Promise<string[]> {
  const status = await readStatus(repo.root, { untracked: false });
  if (!status.ok) throw new Error(status.error);
  return status.entries.map((entry) => entry.path);
}

/**
 * Adds `pattern` as a line of the repository's `info/exclude`, unless it is there already,
 * so that a directory such as `/.colony/` is neither committed nor listed as untracked. The
 * file is local to this clone: nothing in the project's own files changes.
 */
export async function excludeFromGit(repo: Repository, pattern: string): Promise<void> {
  if (pattern.trim() === '' || pattern.includes('\n')) {
    throw new Error(`excludeFromGit needs one non-empty line, got ${JSON.stringify(pattern)}`);
  }
  const excludeFile = join(repo.gitDir, 'info', 'exclude');
  let existing = '';
  try {
    existing = await readFile(excludeFile, 'utf8');
  } catch {
    await mkdir(dirname(excludeFile), { recursive: true });
  }
  if (existing.split(/\r?\n/).some((line) => line.trim() === pattern.trim())) return;
  const separator = existing === '' || existing.endsWith('\n') ? '' : '\n';
  await appendFile(excludeFile, `${separator}${pattern.trim()}\n`);
}
