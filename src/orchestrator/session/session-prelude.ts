import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { DAMAGED_FOLDER_SUFFIX } from '../../store/sqlite/damaged-store-error.js';
import { excludeFromGit, findDirtyFiles, landsOnCheckout, openRepository, type Repository } from '../../workspace/git/repository.js';
import { repairCheckout } from '../setup/checkout-sync.js';
import { acquireRunLock, type RunLock } from '../setup/run-lock.js';
import { acquireStoreLock, runStateAt, type RunState } from '../setup/run-state.js';
import { defaultStateDir, prepareStateDir, stateLockPath } from '../setup/state-directory.js';

export type PreparedSession =
  | { readonly ok: false; readonly error: string }
  | {
      readonly ok: true;
      readonly repo: Repository;
      readonly stateDir: string;
      /** The state directory, and the store the run's log is in when it is not there. */
      readonly state: RunState;
      /** The state directory's run lock, held until `release`. */
      readonly stateLock: RunLock;
      /** Aborts, its reason an Error, when a store's run lock is lost under the session (see `StoreLock.lost`); never for a state directory. */
      readonly lockLost: AbortSignal;
      readonly release: () => Promise<void>;
    };

/**
 * What every session that lands work does first, in this order, changing nothing the user
 * would notice when it refuses: open the repository, prepare the state directory (excluded
 * from git), take the repository's and the state directory's run locks (and the store's, for a
 * log in PostgreSQL, which runs on other machines take too), and repair a checkout
 * an earlier run left behind. On success the caller must `release()`. Whether the tree must be
 * clean depends on the trunk, which the caller settles next (see `dirtyCheckoutProblem`).
 */
export async function prepareSession(repoDir: string, stateDirOption: string | undefined, storeUrl?: string): Promise<PreparedSession> {
  const locked = await lockSession(repoDir, stateDirOption, storeUrl);
  if (!locked.ok) return locked;
  const repaired = await repairCheckout(locked.repo);
  if (repaired.ok) return locked;
  await locked.release();
  return { ok: false, error: repaired.error };
}

/**
 * Why a run cannot start on this checkout, or null: a run that lands on the branch checked out
 * keeps the checkout in step with every landing, so it starts from a clean tree. A run on a
 * branch of its own never touches the checkout, and the user's edits there do not matter.
 */
export async function dirtyCheckoutProblem(repo: Repository): Promise<string | null> {
  if (!landsOnCheckout(repo)) return null;
  const dirty = await findDirtyFiles(repo);
  if (dirty.length === 0) return null;
  return (
    `the repository has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}), and the run lands on ${repo.mainBranch}, the branch checked out there. ` +
    'colony keeps that checkout in step with every landing, so it starts from a clean tree: ' +
    `commit or stash your changes (git stash), or let the run land on a branch of its own (leave out --trunk ${repo.mainBranch}), then run this again.`
  );
}

/**
 * The first part of `prepareSession`, for sessions that land nothing and leave the checkout
 * alone (`colony green --now`): the repository opened, the state directory prepared, and both
 * run locks taken. On success the caller must `release()`.
 */
export async function lockSession(repoDir: string, stateDirOption: string | undefined, storeUrl?: string): Promise<PreparedSession> {
  const opened = await openRepository(repoDir);
  if (!opened.ok) return opened;
  const { repo } = opened;
  const stateDir = resolve(stateDirOption ?? defaultStateDir(repo.root));
  const madeStateDir = !existsSync(stateDir);
  const prepared = prepareStateDir(stateDir);
  if (!prepared.ok) return prepared;
  // colony's state never shows in the user's `git status`, even when this run is refused, nor
  // does a damaged state directory the user moved aside as colony asked (see DamagedStoreError).
  // In the git directory, where it is by default, git never looks.
  const inside = relative(repo.root, stateDir);
  if (!inside.startsWith('..') && inside !== '' && relative(repo.gitDir, stateDir).startsWith('..')) {
    await excludeFromGit(repo, `/${inside}/`);
    await excludeFromGit(repo, `/${inside}${DAMAGED_FOLDER_SUFFIX}/`);
  }
  // One run per repository (they would fight over the checkout) and per state directory
  // (they would interleave the event log).
  const repositoryLock = acquireRunLock(join(repo.gitDir, 'colony-run.lock'), `the repository ${repo.root}`);
  if (!repositoryLock.ok) return repositoryLock;
  const stateLock = acquireRunLock(stateLockPath(stateDir), `the state directory ${stateDir}`);
  if (!stateLock.ok) {
    repositoryLock.lock.release();
    return stateLock;
  }
  const state = runStateAt(stateDir, storeUrl);
  const storeLock = storeUrl === undefined ? null : await acquireStoreLock(state);
  const releaseLocal = () => {
    stateLock.lock.release();
    // A session refused before it recorded anything leaves no state directory it made: what is
    // in it then is its lock alone. No other process is between opening that lock and taking
    // it, since each takes the repository's lock, still held here, first.
    // One deleted under the run (see DiskGuard.canStartAgents) has nothing left to remove.
    if (madeStateDir && existsSync(stateDir) && holdsOnlyItsLock(stateDir)) rmSync(stateDir, { recursive: true, force: true });
    repositoryLock.lock.release();
  };
  if (storeLock !== null && !storeLock.ok) {
    releaseLocal();
    return storeLock;
  }
  const release = async () => {
    if (storeLock !== null) await storeLock.lock.release();
    releaseLocal();
  };
  return { ok: true, repo, stateDir, state, stateLock: stateLock.lock, lockLost: storeLock?.lock.lost ?? new AbortController().signal, release };
}

/** Whether the state directory holds nothing but its run lock's files (`run.lock`, its journal, its holder). */
function holdsOnlyItsLock(stateDir: string): boolean {
  const lock = basename(stateLockPath(stateDir));
  return readdirSync(stateDir).every((name) => name === lock || name.startsWith(`${lock}-`) || name.startsWith(`${lock}.`));
}
