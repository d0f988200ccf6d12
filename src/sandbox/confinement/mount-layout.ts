import { resolve } from 'node:path';
import { SPILL_MOUNT, bindsAroundHidden, existingHiddenPaths, resolverDirectory, shownAgainOf } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { coverOperations, reachableWith } from './private-directories.js';
import type { PrivateDirectoryCovers } from './private-directories.js';

/**
 * One mount of a command's view: the host's files at `source` shown at `target`, or, with
 * `source` null, an empty directory (a cover, a fresh /tmp, a hidden directory) in which only
 * the way to the mounts inside it is there, made by the confinement and open to every uid.
 */
export interface LayoutMount {
  readonly target: string;
  readonly source: string | null;
}

/**
 * A command's view of the file system as its confinement mounts it, in mount order, from the
 * host's root. At any path the deepest mount wins, and of two at the same path the later.
 * Paths are absolute and normalized (no trailing slash, no `.` or `..`).
 */
export type MountLayout = readonly LayoutMount[];

/** What a path is in a view: a host path, a directory on the way to a mount, or nothing. */
export type ViewedPath = { readonly kind: 'host'; readonly path: string } | { readonly kind: 'way' } | { readonly kind: 'gone' };

/** What the command finds at `path` in `layout`, by the deepest mount over it. */
export function viewAt(layout: MountLayout, path: string): ViewedPath {
  let over: LayoutMount | null = null;
  for (const mount of layout) {
    if (contains(mount.target, path) && (over === null || mount.target.length >= over.target.length)) over = mount;
  }
  if (over === null) return { kind: 'gone' };
  if (over.source !== null) {
    const rest = path.slice(over.target.length).replace(/^\/+/, '');
    return { kind: 'host', path: rest === '' ? over.source : `${over.source.replace(/\/+$/, '')}/${rest}` };
  }
  // Any mount below `path` lies inside `over`, the deepest over it, and needs the way through `path`.
  return path === over.target || leadsToMount(layout, path) ? { kind: 'way' } : { kind: 'gone' };
}

/** Whether a mount lies below `path`, so the confinement makes the way through it if the host has none. */
export function leadsToMount(layout: MountLayout, path: string): boolean {
  return layout.some((mount) => mount.target !== path && contains(path, mount.target));
}

/**
 * `isInside` for normalized absolute paths, by their text: this runs for every name of every
 * PATH entry of every command.
 */
function contains(directory: string, path: string): boolean {
  return directory === '/' || path === directory || path.startsWith(`${directory}/`);
}

/**
 * The layout a plan gives its command, once its private directories are covered (`covers`) and
 * `fresh` replaced by empty ones: the same steps, in the same order, as `bubblewrap-sandbox.ts`
 * and `unshare-sandbox.ts` take, with hidden files left out (no command runs from one).
 */
export function mountLayoutOf(plan: ConfinementPlan, covers: PrivateDirectoryCovers, fresh: readonly string[]): MountLayout {
  const layout: LayoutMount[] = [{ target: '/', source: '/' }];
  const add = (target: string, source: string | null): void => {
    layout.push({ target: resolve(target), source: source === null ? null : resolve(source) });
  };
  const operations = coverOperations(covers);
  for (let index = 0; index < operations.length; index += 2) {
    const path = operations[index + 1] ?? '/';
    add(path, operations[index] === 'show' ? path : null);
  }
  for (const directory of fresh) add(directory, null);
  const resolver = resolverDirectory();
  if (resolver !== null) add(resolver, resolver);
  const reachable = plan.identity === null ? undefined : reachableWith(covers, plan.identity);
  const hidden = existingHiddenPaths(plan.hidden, plan.identity, reachable, shownAgainOf(plan));
  const binds = bindsAroundHidden(plan.binds, hidden);
  for (const bind of binds.before) add(bind.target, bind.source);
  for (const entry of hidden) if (entry.kind === 'directory') add(entry.path, null);
  add(plan.workspace, plan.workspace);
  for (const bind of binds.after) add(bind.target, bind.source);
  if (plan.spillDirectory !== null) add(SPILL_MOUNT, plan.spillDirectory);
  return layout;
}
