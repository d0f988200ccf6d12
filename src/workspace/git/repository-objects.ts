import { runGit } from './git.js';
import { createObjectStore } from './object-store.js';
import type { ObjectStore } from './object-store.js';
import { createRefUpdates } from './ref-updates.js';
import type { RefUpdates } from './ref-updates.js';
import type { Repository } from './repository.js';
import { createMainHistory } from './main-history.js';
import type { MainHistory } from './main-history.js';

/** What every merge into one repository shares in this process: its objects, its refs, what is known of its main. */
export interface RepositoryObjects {
  readonly store: ObjectStore;
  readonly refs: RefUpdates;
  readonly history: MainHistory;
}

const opened = new Map<string, Promise<RepositoryObjects | null>>();

/**
 * The shared object access for `repo`, or null when in-process merging cannot be used for it:
 * a git older than 2.27, a repository whose objects are not SHA-1, or whose refs are not
 * stored as files.
 */
export function repositoryObjects(repo: Repository): Promise<RepositoryObjects | null> {
  let objects = opened.get(repo.gitDir);
  if (objects === undefined) {
    objects = openRepositoryObjects(repo);
    opened.set(repo.gitDir, objects);
  }
  return objects;
}

/** `update-ref --stdin` transactions (`start`, `prepare`, `commit`) came with git 2.27. */
function supportsTransactions(versionOutput: string): boolean {
  const match = /git version (\d+)\.(\d+)/.exec(versionOutput);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 2 || (major === 2 && minor >= 27);
}

async function openRepositoryObjects(repo: Repository): Promise<RepositoryObjects | null> {
  if (!supportsTransactions((await runGit(repo.root, ['version'])).stdout)) return null;
  const format = await runGit(repo.root, ['rev-parse', '--show-object-format']);
  if (format.code !== 0 || format.stdout.trim() !== 'sha1') return null;
  const refFormat = await runGit(repo.root, ['config', '--get', 'extensions.refStorage']);
  if (refFormat.stdout.trim() !== '' && refFormat.stdout.trim() !== 'files') return null;
  return {
    store: createObjectStore(repo.root, repo.gitDir),
    refs: createRefUpdates(repo.root, repo.gitDir),
    history: createMainHistory(),
  };
}

/** Stops the long-lived git processes opened for `repo` (tests and the end of a run). */
export async function closeRepositoryObjects(repo: Repository): Promise<void> {
  const objects = await opened.get(repo.gitDir);
  opened.delete(repo.gitDir);
  objects?.store.close();
  objects?.refs.close();
}
