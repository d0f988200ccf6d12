import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { leadsToMount, viewAt } from './mount-layout.js';
import type { MountLayout } from './mount-layout.js';

/** What is at a host path for the command's uid, a final symbolic link not followed. */
export type HostEntry =
  | { readonly kind: 'missing' }
  | { readonly kind: 'file' }
  | { readonly kind: 'link'; readonly target: string }
  | { readonly kind: 'directory'; readonly searchable: boolean };

export type HostLookup = (path: string) => HostEntry;

/**
 * A PATH directory as the command finds it: `open` when its uid may search every directory on
 * the way and the directory itself (or the way ends where nothing is yet, which a shell passes
 * over as "not found"), `closed` when a directory there keeps it out (a shell then says
 * "Permission denied" for every program it cannot find), `gone` when the confinement put
 * nothing there (in a cover, a fresh /tmp or a hidden directory, off the way to what is shown).
 */
export type PathStanding = 'open' | 'closed' | 'gone';

/** Why an entry was left out of a command's PATH. */
export type PathDropReason = 'relative' | 'duplicate' | PathStanding;

export interface CommandPath {
  /** The PATH to give the command. */
  readonly path: string;
  /** The entries left out, in their order, with why. */
  readonly dropped: readonly { readonly entry: string; readonly reason: Exclude<PathDropReason, 'open'> }[];
}

/** The most symbolic links followed on one path, as Linux allows. */
const MAX_LINKS = 40;

/**
 * The PATH a confined command gets from `path`: the entries it can search in its view
 * (`layout`, as its uid sees the host through `lookup`), in their order. Relative and empty
 * entries (the command's working directory, wherever it is), repeats, and entries closed or
 * gone in its view are dropped. Pure, given `lookup`.
 */
export function commandPath(path: string, layout: MountLayout, lookup: HostLookup): CommandPath {
  const kept: string[] = [];
  const dropped: { entry: string; reason: Exclude<PathDropReason, 'open'> }[] = [];
  const seen = new Set<string>();
  // Entries share their first directories: each host path is looked up once.
  const found = new Map<string, HostEntry>();
  const lookupOnce: HostLookup = (host) => {
    const known = found.get(host);
    if (known !== undefined) return known;
    const entry = lookup(host);
    found.set(host, entry);
    return entry;
  };
  for (const entry of path.split(':')) {
    const standing = !isAbsolute(entry) ? 'relative' : seen.has(entry) ? 'duplicate' : pathStanding(entry, layout, lookupOnce);
    seen.add(entry);
    if (standing === 'open') kept.push(entry);
    else dropped.push({ entry, reason: standing });
  }
  return { path: kept.join(':'), dropped };
}

/**
 * How the command finds the directory `path` in `layout`: walked a name at a time from `/`, as
 * the kernel walks it, following symbolic links where the view shows the host's files.
 */
export function pathStanding(path: string, layout: MountLayout, lookup: HostLookup): PathStanding {
  const pending = names(path);
  let current = '/';
  let links = 0;
  for (;;) {
    const here = viewAt(layout, current);
    if (here.kind === 'gone') return 'gone';
    if (here.kind === 'host') {
      const found = lookup(here.path);
      // Nothing there, which a shell passes over, unless a mount below makes the way (open to all).
      if ((found.kind === 'missing' || found.kind === 'file') && !leadsToMount(layout, current)) return 'open';
      if (found.kind === 'directory' && !found.searchable) return 'closed';
    }
    const name = pending.shift();
    if (name === undefined) return 'open';
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    const there = viewAt(layout, next);
    const found = there.kind === 'host' ? lookup(there.path) : null;
    if (found?.kind === 'link') {
      links += 1;
      if (links > MAX_LINKS) return 'gone';
      pending.unshift(...names(found.target));
      if (isAbsolute(found.target)) current = '/';
      continue;
    }
    current = next;
  }
}

/**
 * A lookup of the host's files as `uid` with `gids` sees them: a directory is searchable by
 * its owner's, group's or others' x bit, whichever applies first, as the kernel decides (root
 * passes everywhere).
 */
export function hostLookupFor(uid: number, gids: readonly number[]): HostLookup {
  return (path) => {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) return { kind: 'link', target: readlinkSync(path) };
      if (!info.isDirectory()) return { kind: 'file' };
      if (uid === 0) return { kind: 'directory', searchable: true };
      const bit = info.uid === uid ? 0o100 : gids.includes(info.gid) ? 0o010 : 0o001;
      return { kind: 'directory', searchable: (info.mode & bit) !== 0 };
    } catch {
      return { kind: 'missing' };
    }
  };
}

function names(path: string): string[] {
  return path.split('/').filter((name) => name !== '' && name !== '.');
}
