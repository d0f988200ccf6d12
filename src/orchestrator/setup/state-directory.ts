import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { errorMessage } from '../../errors/error-message.js';
import { findGitLayout } from './git-layout.js';

/** Where a repository's runs keep their state unless told otherwise, and whether that is an earlier version's place in the checkout. */
export interface DefaultStateDir {
  readonly path: string;
  /** True for `<checkout>/.colony`, left by an earlier version with runs in it; such a directory is one `git clean -fdx` away from being deleted. */
  readonly inCheckout: boolean;
}

/**
 * The state directory a repository's runs use unless told otherwise: `colony` in the
 * repository's common git directory, out of the working tree, so nothing done to the checkout
 * (`git clean -fdx`, `git stash -u`, deleting its files) reaches a run's state, and every linked
 * worktree of the repository finds the same one. A state directory an earlier version made in
 * the checkout (`<root>/.colony`, holding a `colony.db`) stays the default while it is there, so
 * its runs are still found and resumed. Outside any git repository it is `<repoDir>/.colony`,
 * a path no command uses before saying the directory is not a repository.
 */
export function locateDefaultStateDir(repoDir: string): DefaultStateDir {
  const directory = resolve(repoDir);
  const layout = findGitLayout(directory);
  if (layout === null) return { path: join(directory, '.colony'), inCheckout: false };
  const legacy = join(layout.root, '.colony');
  if (existsSync(eventsDatabasePath(legacy))) return { path: legacy, inCheckout: true };
  return { path: join(layout.commonDir, 'colony'), inCheckout: false };
}

/** The path of `locateDefaultStateDir`, for callers that need no more. */
export function defaultStateDir(repoDir: string): string {
  return locateDefaultStateDir(repoDir).path;
}

/** The events database inside a state directory. */
export function eventsDatabasePath(stateDir: string): string {
  return join(stateDir, 'colony.db');
}

/** The lock every run using a state directory holds while it runs. */
export function stateLockPath(stateDir: string): string {
  return join(stateDir, 'run.lock');
}

/** Where a state directory's runs make workers' workspaces. */
export function workspacesDirOf(stateDir: string): string {
  return join(stateDir, 'workspaces');
}

/** Where a state directory's runs make planners' and checks' views of main. */
export function viewsDirOf(stateDir: string): string {
  return join(stateDir, 'views');
}

/** Where runs keep the goals given inline (`colony run --goal "..."`), one file a run, so `colony resume` and the goal watch have a file as for any goal. */
export function goalsDirOf(stateDir: string): string {
  return join(stateDir, 'goals');
}

/** Where overlay workspaces keep their shared base checkouts and their own layers. */
export function overlayStorageDirOf(stateDir: string): string {
  return join(workspacesDirOf(stateDir), '.overlay');
}

export type Prepared = { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * Makes sure the state directory exists and is a directory. Only its last component is
 * created: a parent that does not exist is more likely a typo than a wish.
 */
export function prepareStateDir(stateDir: string): Prepared {
  try {
    if (existsSync(stateDir)) {
      if (!statSync(stateDir).isDirectory()) {
        return { ok: false, error: `the state directory ${stateDir} is a file, not a directory: pass another path with --state` };
      }
      return { ok: true };
    }
    const parent = dirname(stateDir);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) {
      return { ok: false, error: `cannot make the state directory ${stateDir}: ${parent} does not exist. Create it, or pass another --state` };
    }
    mkdirSync(stateDir);
    return { ok: true };
  } catch (error) {
    const reason = errorMessage(error);
    return { ok: false, error: `cannot use the state directory ${stateDir}: ${reason}. Pass another path with --state` };
  }
}
