import { describeFailure, runGit } from './git.js';
import type { Repository, TrunkOrigin } from './repository.js';

export type { TrunkOrigin } from './repository.js';

export type TrunkOriginResult = { readonly ok: true; readonly origin: TrunkOrigin; readonly secrets: readonly string[] } | { readonly ok: false; readonly error: string };

/**
 * The reflog message of every move of a trunk colony makes: `trunk-watch.ts` takes entries with
 * it as colony's own.
 */
export const COLONY_REFLOG_PREFIX = 'colony: ';

/** The environment variables the credential helper below reads; set only on calls to the origin. */
const USER_VARIABLE = 'COLONY_ORIGIN_USER';
const PASSWORD_VARIABLE = 'COLONY_ORIGIN_PASSWORD';

/**
 * A credential helper that answers git with the user name and password of the environment, so
 * neither is ever on a command line (which every user of the machine can read). The repository's
 * own helpers stay switched off: the empty value first clears them.
 */
const CREDENTIAL_ARGS = ['-c', 'credential.helper=', '-c', `credential.helper=!f() { test "$1" = get && printf 'username=%s\\npassword=%s\\n' "$${USER_VARIABLE}" "$${PASSWORD_VARIABLE}"; }; f`];

/**
 * Reads an origin's URL: any URL or path git can push to. A password in an http(s) URL is
 * taken out of it and handed to colony's own git calls alone (returned in `secrets` to be
 * redacted everywhere); ssh keys, `~/.netrc` and a password in the URL are the ways to log in.
 */
export function trunkOriginOf(given: string): TrunkOriginResult {
  const text = given.trim();
  if (text === '') return { ok: false, error: 'the origin is empty: give the URL of a git repository every host can reach (https://…, ssh://…, or a path).' };
  if (!/^https?:\/\//i.test(text)) return { ok: true, origin: { url: text, env: {} }, secrets: [] };
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return { ok: false, error: `the origin ${JSON.stringify(text.replace(/\/\/[^/@]*@/, '//[redacted]@'))} is not a URL: give it as https://host/path/repo.git.` };
  }
  if (parsed.password === '') return { ok: true, origin: { url: text, env: {} }, secrets: [] };
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  parsed.username = '';
  const env = { [USER_VARIABLE]: user, [PASSWORD_VARIABLE]: password };
  return { ok: true, origin: { url: parsed.toString(), env }, secrets: [password] };
}

/** The same repository with its trunk landing on `origin`. */
export function withOrigin(repo: Repository, origin: TrunkOrigin): Repository {
  return { ...repo, origin };
}

async function originGit(repo: Repository, origin: TrunkOrigin, args: readonly string[]) {
  const credentials = Object.keys(origin.env).length === 0 ? [] : CREDENTIAL_ARGS;
  return runGit(repo.root, [...credentials, ...args], { env: origin.env });
}

export type FetchedTrunk = { readonly ok: true; readonly commit: string | null } | { readonly ok: false; readonly error: string };

/** The origin's trunk, its commits fetched into `repo`; null when the origin has no such branch. */
export async function fetchOriginTrunk(repo: Repository, origin: TrunkOrigin, branch: string = repo.mainBranch): Promise<FetchedTrunk> {
  // One fetch, one round trip: a branch the origin lacks is git's "couldn't find remote ref".
  const fetchArgs = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', origin.url, `+refs/heads/${branch}:${originRef(branch)}`];
  const fetched = await originGit(repo, origin, fetchArgs);
  if (fetched.code !== 0 && /couldn't find remote ref/i.test(fetched.stderr)) return { ok: true, commit: null };
  if (fetched.code !== 0) return { ok: false, error: `could not fetch ${branch} from the origin ${origin.url}: ${describeFailure(['fetch'], fetched)}` };
  const read = await runGit(repo.root, ['rev-parse', '--verify', '--quiet', `${originRef(branch)}^{commit}`]);
  if (read.code !== 0) return { ok: false, error: `the origin's ${branch} was fetched but cannot be read: ${describeFailure(['rev-parse'], read)}` };
  return { ok: true, commit: read.stdout.trim() };
}

/** Where the last look at the origin's `branch` is kept in a repository: out of the user's branches and remotes. */
export function originRef(branch: string): string {
  return `refs/colony/origin/${branch}`;
}

export type PushOutcome = { readonly status: 'pushed' } | { readonly status: 'moved' } | { readonly status: 'failed'; readonly error: string };

/**
 * Moves the origin's `branch` to `commit` if it is at `expected` (null: if it does not exist),
 * sending what it lacks: one compare-and-swap. 'moved' when it was elsewhere: someone landed first.
 */
export async function pushOriginTrunk(repo: Repository, origin: TrunkOrigin, commit: string, expected: string | null, branch: string = repo.mainBranch): Promise<PushOutcome> {
  const ref = `refs/heads/${branch}`;
  const args = ['push', '--porcelain', '--quiet', '--no-verify', `--force-with-lease=${ref}:${expected ?? ''}`, origin.url, `${commit}:${ref}`];
  const pushed = await originGit(repo, origin, args);
  if (pushed.code === 0) return { status: 'pushed' };
  // The porcelain line of a refused update names why: a stale lease or a non-fast-forward is a lost race.
  if (/\[rejected\]|stale info|fetch first|non-fast-forward|cannot lock ref|reference already exists/.test(pushed.stdout + pushed.stderr)) return { status: 'moved' };
  return { status: 'failed', error: `could not push to the origin ${origin.url}: ${describeFailure(['push'], pushed)}` };
}

export type LandOnOrigin = { readonly status: 'landed' } | { readonly status: 'lost-race'; readonly current: string } | { readonly status: 'failed'; readonly error: string };

/**
 * Lands `commit`, replayed onto `mainBefore`, on the origin's trunk, then moves the trunk of
 * `repo` to it. When the origin's trunk had moved, the trunk of `repo` is brought up to it
 * instead and 'lost-race' says where it is now, to replay onto. Called in main's turn.
 */
export async function landOnOrigin(repo: Repository, origin: TrunkOrigin, commit: string, mainBefore: string, message: string): Promise<LandOnOrigin> {
  const pushed = await pushOriginTrunk(repo, origin, commit, mainBefore);
  if (pushed.status === 'failed') return pushed;
  if (pushed.status === 'pushed') {
    const moved = await moveLocalTrunk(repo, commit, message);
    return moved === null ? { status: 'landed' } : { status: 'failed', error: `the work landed on the origin as ${commit}, but ${moved}` };
  }
  const followed = await followOrigin(repo, origin);
  if (!followed.ok) return { status: 'failed', error: followed.error };
  return { status: 'lost-race', current: followed.commit };
}

export type Followed = { readonly ok: true; readonly commit: string } | { readonly ok: false; readonly error: string };

/**
 * Brings the trunk of `repo` up to the origin's. Refuses when the origin's trunk no longer
 * holds the local one (someone moved it back): landed work would be lost either way, so a
 * person must look.
 */
export async function followOrigin(repo: Repository, origin: TrunkOrigin): Promise<Followed> {
  const fetched = await fetchOriginTrunk(repo, origin);
  if (!fetched.ok) return fetched;
  if (fetched.commit === null) return { ok: false, error: `the origin ${origin.url} has no branch ${repo.mainBranch}: someone deleted the run's trunk there. Push it back (\`git push ${origin.url} ${repo.mainBranch}\` from a checkout that has it) and go on.` };
  const local = await runGit(repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${repo.mainBranch}^{commit}`]);
  const localCommit = local.code === 0 ? local.stdout.trim() : null;
  if (localCommit === fetched.commit) return { ok: true, commit: fetched.commit };
  if (localCommit !== null && (await runGit(repo.root, ['merge-base', '--is-ancestor', localCommit, fetched.commit])).code !== 0) {
    return {
      ok: false,
      error: `the origin's ${repo.mainBranch} (${fetched.commit.slice(0, 12)}) no longer holds ${localCommit.slice(0, 12)}, which landed on it: someone moved it back. Put the landed work back on the origin's ${repo.mainBranch} and go on.`,
    };
  }
  const moved = await moveLocalTrunk(repo, fetched.commit, `follow ${origin.url}`);
  return moved === null ? { ok: true, commit: fetched.commit } : { ok: false, error: moved };
}

/** Moves the trunk of `repo` to `commit` with colony's reflog message; null, or what went wrong. */
async function moveLocalTrunk(repo: Repository, commit: string, message: string): Promise<string | null> {
  const args = ['update-ref', '-m', `${COLONY_REFLOG_PREFIX}${message}`, `refs/heads/${repo.mainBranch}`, commit];
  const moved = await runGit(repo.root, args);
  return moved.code === 0 ? null : `its copy in ${repo.root} could not be moved to it: ${describeFailure(args, moved)}`;
}

/**
 * Puts a new run's trunk on the origin at `commit`, where the run starts. Refuses when the
 * origin has a branch of that name elsewhere: it is someone's work, not this run's.
 */
export async function publishTrunk(repo: Repository, origin: TrunkOrigin, commit: string): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  const pushed = await pushOriginTrunk(repo, origin, commit, null);
  if (pushed.status === 'pushed') return { ok: true };
  if (pushed.status === 'failed') return { ok: false, error: pushed.error };
  const there = await fetchOriginTrunk(repo, origin);
  if (!there.ok) return there;
  if (there.commit === commit) return { ok: true };
  return {
    ok: false,
    error: `the origin ${origin.url} already has a branch ${repo.mainBranch} at ${there.commit?.slice(0, 12) ?? 'another commit'}, not at ${commit.slice(0, 12)} where this run starts: land on another branch (--trunk NAME), or delete that one on the origin if it is no one's work.`,
  };
}
