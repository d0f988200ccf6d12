import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { COLONY_REFLOG_PREFIX, fetchOriginTrunk, withOrigin, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';

/** The branch checked out in a host's mirror: the run's trunk is never checked out there, so fetching may move it. */
export const HOST_BRANCH = 'colony-host';

/** Where a worker host keeps its copy of the origin, in its state directory. */
export function hostMirrorDir(stateDir: string): string {
  return join(stateDir, 'origin');
}

export type HostMirror = { readonly ok: true; readonly repo: Repository; readonly trunkCommit: string } | { readonly ok: false; readonly error: string };

/**
 * A worker host's copy of the origin, made on first use and kept between runs: a checkout of
 * the run's trunk as it is now on `HOST_BRANCH` (so the repository's own prompts and setup
 * files are there), with the trunk itself a branch that follows the origin's. Workers'
 * workspaces are made from it and land through it on the origin.
 */
export async function openHostMirror(stateDir: string, origin: TrunkOrigin, trunk: string): Promise<HostMirror> {
  const dir = hostMirrorDir(stateDir);
  if (!existsSync(join(dir, '.git'))) {
    mkdirSync(dir, { recursive: true });
    const init = await runGit(dir, ['init', '--quiet', `--initial-branch=${HOST_BRANCH}`]);
    if (init.code !== 0) return { ok: false, error: `could not make the host's copy of the origin in ${dir}: ${describeFailure(['init'], init)}` };
  }
  const fetched = await fetchOriginTrunk({ root: dir, gitDir: join(dir, '.git'), mainBranch: trunk, checkedOutBranch: HOST_BRANCH }, origin, trunk);
  if (!fetched.ok) return fetched;
  if (fetched.commit === null) {
    return { ok: false, error: `the origin ${origin.url} has no branch ${trunk}, the run's trunk: the run pushes it there when it starts with --origin ${origin.url}; check that the run and this host name the same origin.` };
  }
  // The trunk's files, checked out on the host's own branch; the trunk branch itself follows the origin.
  const checkout = await runGit(dir, ['checkout', '--quiet', '--force', '-B', HOST_BRANCH, fetched.commit]);
  if (checkout.code !== 0) return { ok: false, error: `could not check out the run's trunk in ${dir}: ${describeFailure(['checkout'], checkout)}` };
  const opened = await openRepository(dir);
  if (!opened.ok) return opened;
  // Set, not followed: a branch of the same name left by an earlier run is no guide to this one.
  const setArgs = ['update-ref', '-m', `${COLONY_REFLOG_PREFIX}follow ${origin.url}`, `refs/heads/${trunk}`, fetched.commit];
  const set = await runGit(dir, setArgs);
  if (set.code !== 0) return { ok: false, error: `could not set the run's trunk in ${dir}: ${describeFailure(setArgs, set)}` };
  return { ok: true, repo: withOrigin({ ...opened.repo, mainBranch: trunk }, origin), trunkCommit: fetched.commit };
}
