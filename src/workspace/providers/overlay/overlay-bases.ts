import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFailure, runGit } from '../../git/git.js';
import { pathExists } from '../../files/path-exists.js';
import type { Repository } from '../../git/repository.js';

/** A read-only checkout of one commit, the lowest layer of overlay workspaces. */
export interface BaseCheckout {
  readonly commit: string;
  /** The checked-out files. Never written once made: overlays above it may be mounted. */
  readonly tree: string;
  /** An index of `tree` with valid stat data, copied (linked) into each workspace so its first `git status` is fast. */
  readonly index: string;
}

export interface BaseCheckoutsOptions {
  /**
   * A base is reused while main differs from it by at most this many files: each
   * workspace then brings itself forward, copying up only those files. Beyond it, a new base
   * of main is made and waited for.
   */
  readonly reuseUpToFiles?: number;
  /** From this many changed files on, a new base is made in the background while the old one is still used. */
  readonly refreshFromFiles?: number;
}

/** The base checkouts of one repository in one directory: made once per main commit, shared, and deleted when nothing uses them. */
export interface BaseCheckouts {
  /** A base for a workspace at `mainCommit`, counted as used until `release`. Throws when it cannot be made. */
  acquire(mainCommit: string): Promise<BaseCheckout>;
  release(base: BaseCheckout): void;
  /** The base of exactly `commit`, made if missing, not counted as used (for remounting a workspace left behind). */
  ensure(commit: string): Promise<BaseCheckout>;
  /**
   * Deletes every base that no live workspace uses nor `alsoKeep` names, and that is not the
   * newest unless `keepNewest` is false; with `only`, that base alone is considered. Returns
   * the directories deleted.
   */
  prune(alsoKeep?: ReadonlySet<string>, keepNewest?: boolean, only?: string): Promise<string[]>;
  /** Commits whose bases are in use now. */
  inUse(): ReadonlySet<string>;
  /** Waits for a base being made in the background, so nothing is left half-made. */
  settle(): Promise<void>;
}

const DEFAULT_REUSE_UP_TO_FILES = 2_000;
const DEFAULT_REFRESH_FROM_FILES = 200;
const INDEX_VERSION = '4';

export function createBaseCheckouts(repo: Repository, basesDir: string, options: BaseCheckoutsOptions = {}): BaseCheckouts {
  const reuseUpTo = options.reuseUpToFiles ?? DEFAULT_REUSE_UP_TO_FILES;
  const refreshFrom = options.refreshFromFiles ?? DEFAULT_REFRESH_FROM_FILES;
  const users = new Map<string, number>();
  const building = new Map<string, Promise<BaseCheckout>>();
  const distance = new Map<string, number>();
  let newest: BaseCheckout | null = null;

  const layout = (commit: string): BaseCheckout => ({ commit, tree: join(basesDir, commit, 'tree'), index: join(basesDir, commit, 'index') });

  /** Makes (or finds on disk) the base of `commit`; several callers share one build. */
  const ensure = (commit: string): Promise<BaseCheckout> => {
    const running = building.get(commit);
    if (running !== undefined) return running;
    const made = (async () => {
      const base = layout(commit);
      if (!(await pathExists(base.index))) await buildBase(repo, basesDir, commit);
      return base;
    })();
    building.set(commit, made);
    made.then(
      () => building.delete(commit),
      () => building.delete(commit),
    );
    return made;
  };

  const becomeNewest = (base: BaseCheckout): void => {
    newest = base;
    distance.clear();
  };

  const changedFiles = async (from: string, to: string): Promise<number> => {
    const known = distance.get(to);
    if (known !== undefined) return known;
    const args = ['diff-tree', '-r', '--name-only', '-z', '--no-renames', from, to];
    const result = await runGit(repo.root, args);
    // Unreadable means "far": a fresh base is always correct, only slower.
    const count = result.code === 0 ? result.stdout.split('\0').filter((path) => path !== '').length : Number.POSITIVE_INFINITY;
    distance.set(to, count);
    return count;
  };

  const use = (base: BaseCheckout): BaseCheckout => {
    users.set(base.commit, (users.get(base.commit) ?? 0) + 1);
    return base;
  };

  return {
    async acquire(mainCommit) {
      const current: BaseCheckout | null = newest;
      if (current === null || current.commit === mainCommit) {
        const base = await ensure(mainCommit);
        becomeNewest(base);
        return use(base);
      }
      const changed = await changedFiles(current.commit, mainCommit);
      // A newer base took over meanwhile, and the old one may be pruned at any moment: start again.
      if (newest !== current) return this.acquire(mainCommit);
      if (changed > reuseUpTo) {
        const base = await ensure(mainCommit);
        if (newest === current) becomeNewest(base);
        return use(base);
      }
      if (changed >= refreshFrom && building.size === 0) {
        // Workers keep starting on the current base meanwhile; the next ones get the new one.
        ensure(mainCommit).then(
          (base) => becomeNewest(base),
          () => undefined,
        );
      }
      return use(current);
    },
    release(base) {
      const count = (users.get(base.commit) ?? 0) - 1;
      if (count > 0) users.set(base.commit, count);
      else users.delete(base.commit);
    },
    ensure,
    async prune(alsoKeep = new Set<string>(), keepNewest = true, only?: string) {
      let names: string[];
      try {
        names = await readdir(basesDir);
      } catch {
        return [];
      }
      const deleted: string[] = [];
      for (const name of names) {
        const current: BaseCheckout | null = newest;
        if (only !== undefined && name !== only) continue;
        if ((keepNewest && name === current?.commit) || users.has(name) || alsoKeep.has(name)) continue;
        if (name.startsWith('.partial-') && building.size > 0) continue;
        const path = join(basesDir, name);
        // Moved aside first, so a half-deleted base is never mistaken for a whole one.
        const aside = join(basesDir, `.deleting-${name}-${randomBytes(4).toString('hex')}`);
        try {
          await rename(path, aside);
          await rm(aside, { recursive: true, force: true });
          deleted.push(path);
          if (name === current?.commit) newest = null;
        } catch {
          // Still there: the next prune tries again.
        }
      }
      return deleted;
    },
    inUse: () => new Set(users.keys()),
    async settle() {
      await Promise.allSettled([...building.values()]);
    },
  };
}

/**
 * Checks `commit` out into `<basesDir>/<commit>/tree` with its own index (version 4, which
 * keeps path names short), made aside and renamed into place whole. The index is refreshed
 * once the clock has moved past the files' times: an index written in the same instant as its
 * files marks them "racily clean", and every workspace would then re-read them on its first
 * `git status` and write an index of its own.
 */
async function buildBase(repo: Repository, basesDir: string, commit: string): Promise<void> {
  const partial = join(basesDir, `.partial-${commit}-${randomBytes(4).toString('hex')}`);
  const tree = join(partial, 'tree');
  const env = { GIT_INDEX_FILE: join(partial, 'index') };
  const git = async (args: readonly string[]): Promise<void> => {
    const result = await runGit(tree, ['--git-dir', repo.gitDir, '--work-tree', tree, ...args], { env });
    if (result.code !== 0) throw new Error(`Cannot make the base checkout of ${commit}: ${describeFailure(args, result)}`);
  };
  try {
    await mkdir(tree, { recursive: true });
    await git(['-c', `index.version=${INDEX_VERSION}`, 'read-tree', '--reset', '-u', commit]);
    await new Promise((resolve) => setTimeout(resolve, 1_100 - (Date.now() % 1_000)));
    await git(['update-index', '-q', '--refresh']);
    await rename(partial, join(basesDir, commit));
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    // Another process made the same base meanwhile: theirs is as good.
    if (await pathExists(join(basesDir, commit, 'index'))) return;
    throw error;
  }
}
