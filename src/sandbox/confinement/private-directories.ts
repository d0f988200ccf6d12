import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isInside } from './confinement-plan.js';

/** The uid and gid a confined command runs as. */
export interface CommandIdentity {
  readonly uid: number;
  readonly gid: number;
}

/**
 * How a command's mount namespace gets its agent through directories the agent's uid may not
 * enter (a home at 0700, a `mktemp -d`): each is covered by an empty tmpfs of root's, mode 0711
 * (anyone may pass, nobody may list it or write in it), and only the paths the command needs
 * are bound back at their own places. Everything else in a covered directory is gone from the
 * command's view, at the same absolute paths as on the host for what it does see.
 */
export interface PrivateDirectoryCovers {
  /** Directories the agent's uid may not search, covered in this order (a parent before what is inside it). */
  readonly covers: readonly string[];
  /** Host paths shown again below a cover, at the same path, bound in this order. */
  readonly shown: readonly string[];
}

export const NO_COVERS: PrivateDirectoryCovers = { covers: [], shown: [] };

/** Whether `identity` may search the host directory `dir` (x for its owner, group or others), false when it cannot be read. */
export function searchableBy(identity: CommandIdentity): (dir: string) => boolean {
  return (dir) => {
    try {
      const info = statSync(dir);
      if (!info.isDirectory()) return false;
      const bit = info.uid === identity.uid ? 0o100 : info.gid === identity.gid ? 0o010 : 0o001;
      return (info.mode & bit) !== 0;
    } catch {
      return false;
    }
  };
}

/**
 * The covers and shown paths that let a command reach every path of `mustReach` (resolved;
 * missing ones are dropped, as the confinement would fail on them anyway). A directory the
 * agent may not search on the way to one is covered, unless it is already replaced by a
 * cover's empty directories; a path below a cover is shown again unless a shown path above it
 * already shows it. A directory inside a shown path keeps its host mode, so a private one
 * there is covered in turn. Pure but for `realpath`, given `searchable`.
 */
export function planCovers(mustReach: readonly string[], searchable: (dir: string) => boolean): PrivateDirectoryCovers {
  const covers: string[] = [];
  const shown: string[] = [];
  const paths = [...new Set(mustReach.flatMap((path) => resolved(path)))].sort((a, b) => a.length - b.length);
  for (const path of paths) {
    for (const dir of ancestorsOf(path)) {
      // A path that must be reached is never covered itself: what is in it would be gone.
      if (dir === '/' || covers.includes(dir) || paths.includes(dir)) continue;
      if (underCoverOnly(dir, covers, shown) || searchable(dir)) continue;
      covers.push(dir);
    }
    if (underCoverOnly(path, covers, shown)) shown.push(path);
  }
  return { covers, shown };
}

/**
 * Whether `path` lies in a cover's own tmpfs: below the nearest cover above it, with no shown
 * path between (one that is shown, or inside a shown one, is the host's again).
 */
function underCoverOnly(path: string, covers: readonly string[], shown: readonly string[]): boolean {
  const cover = nearest(covers.filter((dir) => dir !== path && isInside(dir, path)));
  if (cover === null) return false;
  return !shown.some((dir) => dir !== cover && isInside(cover, dir) && isInside(dir, path));
}

/**
 * Whether `path` is in the view the covers make, and reachable by the agent: false when it is
 * in a cover's tmpfs without being on the way to a shown path (it is gone), or when a
 * directory above it keeps the agent out. What hiding must still cover is what this says yes to.
 */
export function reachableInView(path: string, plan: PrivateDirectoryCovers, searchable: (dir: string) => boolean): boolean {
  const inCover = (dir: string): boolean => underCoverOnly(dir, plan.covers, plan.shown);
  if (inCover(path) && !plan.shown.some((dir) => isInside(path, dir))) return false;
  for (const dir of ancestorsOf(path)) {
    if (dir === '/' || plan.covers.includes(dir)) continue;
    if (inCover(dir)) continue;
    if (!searchable(dir)) return false;
  }
  return true;
}

/** What `existingHiddenPaths` must ask of a hidden path when `plan` covers private directories: whether it is reachable in their view. */
export function reachableWith(plan: PrivateDirectoryCovers, identity: CommandIdentity): ((path: string) => boolean) | undefined {
  if (plan.covers.length === 0) return undefined;
  const searchable = searchableBy(identity);
  return (path) => reachableInView(path, plan, searchable);
}

/** The directories above `path`, from `/` down to its parent. */
function ancestorsOf(path: string): string[] {
  const found: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    found.unshift(dir);
    if (dirname(dir) === dir) return found;
  }
}

function nearest(dirs: readonly string[]): string | null {
  return dirs.reduce<string | null>((best, dir) => (best === null || dir.length > best.length ? dir : best), null);
}

function resolved(path: string): string[] {
  try {
    return [realpathSync(path)];
  } catch {
    return [];
  }
}

/** The covers and shown paths as one list in mount order (a parent before what is inside it): `cover PATH` or `show PATH` pairs. */
export function coverOperations(plan: PrivateDirectoryCovers): string[] {
  const operations = [...plan.covers.map((path) => ['cover', path] as const), ...plan.shown.map((path) => ['show', path] as const)];
  return operations.sort((a, b) => a[1].length - b[1].length).flat();
}
