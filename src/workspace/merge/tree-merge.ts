import { mergeAppendOnly } from './append-only-merge.js';
import { isTreeEntry, readableText } from '../git/git-objects.js';
import type { TreeEntry } from '../git/git-objects.js';
import type { ObjectStore } from '../git/object-store.js';

/**
 * Three-way merges of trees, in-process. A path changed on one side only takes that side; the
 * same change on both sides is kept once; a file both sides only appended to is merged as the
 * main's version followed by the other side's block (the rule of `append-only-merge.ts`).
 * Anything else is a conflict, which the caller hands to git (and, if git cannot settle it, to
 * the agent): this merge never writes markers and never guesses.
 */
export type TreeMergeResult =
  | { readonly ok: true; readonly tree: string; readonly autoResolved: readonly string[] }
  | {
      readonly ok: false;
      readonly error: string;
      /** The path both sides changed in ways this merge cannot settle. */
      readonly conflict: string;
    };

interface MergeState {
  readonly store: ObjectStore;
  readonly autoResolved: string[];
  conflict: string | null;
}

function sameEntry(a: TreeEntry | undefined, b: TreeEntry | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.mode === b.mode && a.oid === b.oid;
}

function isRegularFile(entry: TreeEntry | undefined): entry is TreeEntry {
  return entry !== undefined && (entry.mode === '100644' || entry.mode === '100755');
}

function byName(entries: readonly TreeEntry[]): Map<string, TreeEntry> {
  return new Map(entries.map((entry) => [entry.name, entry]));
}

/** Files larger than this are left to git: merging them here would hold main's turn. */
const MERGEABLE_BYTES = 1024 * 1024;

/** The text of a blob, or null when it is binary, not valid UTF-8 or large (such files are never merged here). */
async function blobText(store: ObjectStore, oid: string): Promise<string | null> {
  const object = await store.read(oid);
  if (object === null || object.type !== 'blob' || object.content.length > MERGEABLE_BYTES) return null;
  const text = object.content.toString('utf8');
  return Buffer.byteLength(text, 'utf8') === object.content.length && Buffer.from(text, 'utf8').equals(object.content) ? text : null;
}

async function mergeFiles(state: MergeState, path: string, base: TreeEntry, ours: TreeEntry, theirs: TreeEntry): Promise<TreeEntry | null> {
  if (ours.mode !== theirs.mode) return null;
  const [baseText, oursText, theirsText] = await Promise.all([blobText(state.store, base.oid), blobText(state.store, ours.oid), blobText(state.store, theirs.oid)]);
  if (baseText === null || oursText === null || theirsText === null) return null;
  const merged = mergeAppendOnly(baseText, oursText, theirsText);
  if (merged === null) return null;
  const oid = await state.store.write('blob', Buffer.from(merged, 'utf8'));
  state.autoResolved.push(readableText(path));
  return { name: ours.name, mode: ours.mode, oid };
}

async function mergeEntry(
  state: MergeState,
  path: string,
  base: TreeEntry | undefined,
  ours: TreeEntry | undefined,
  theirs: TreeEntry | undefined,
): Promise<TreeEntry | undefined> {
  if (sameEntry(ours, theirs)) return ours;
  if (sameEntry(base, ours)) return theirs;
  if (sameEntry(base, theirs)) return ours;
  if (ours !== undefined && theirs !== undefined && isTreeEntry(ours) && isTreeEntry(theirs) && (base === undefined || isTreeEntry(base))) {
    const entries = await mergeLevel(state, `${path}/`, base?.oid ?? null, ours.oid, theirs.oid);
    if (entries === null || entries.length === 0) return undefined;
    return { name: ours.name, mode: ours.mode, oid: await state.store.writeTree(entries) };
  }
  if (isRegularFile(base) && isRegularFile(ours) && isRegularFile(theirs)) {
    const merged = await mergeFiles(state, path, base, ours, theirs);
    if (merged !== null) return merged;
  }
  state.conflict = readableText(path);
  return undefined;
}

async function mergeLevel(state: MergeState, prefix: string, base: string | null, ours: string, theirs: string): Promise<TreeEntry[] | null> {
  const [baseEntries, oursEntries, theirsEntries] = await Promise.all([
    base === null ? Promise.resolve([]) : state.store.readTree(base),
    state.store.readTree(ours),
    state.store.readTree(theirs),
  ]);
  const baseByName = byName(baseEntries);
  const oursByName = byName(oursEntries);
  const theirsByName = byName(theirsEntries);
  const names = new Set([...oursByName.keys(), ...theirsByName.keys(), ...baseByName.keys()]);
  const merged: TreeEntry[] = [];
  for (const name of names) {
    const entry = await mergeEntry(state, `${prefix}${name}`, baseByName.get(name), oursByName.get(name), theirsByName.get(name));
    if (state.conflict !== null) return null;
    if (entry !== undefined) merged.push(entry);
  }
  return merged;
}

/** Merges the change from `base` to `theirs` into `ours` (all tree ids). */
export async function mergeTrees(store: ObjectStore, base: string, ours: string, theirs: string): Promise<TreeMergeResult> {
  if (ours === base || ours === theirs) return { ok: true, tree: theirs, autoResolved: [] };
  if (theirs === base) return { ok: true, tree: ours, autoResolved: [] };
  const state: MergeState = { store, autoResolved: [], conflict: null };
  const entries = await mergeLevel(state, '', base, ours, theirs);
  if (entries === null || state.conflict !== null) return { ok: false, error: `${state.conflict ?? 'a path'} changed on both sides in ways a tree merge cannot settle`, conflict: state.conflict ?? '' };
  return { ok: true, tree: await store.writeTree(entries), autoResolved: state.autoResolved };
}

/** The paths of files (and symlinks, submodules) that differ between two trees, subtrees that match skipped whole. */
export async function changedPaths(store: ObjectStore, from: string, to: string): Promise<string[]> {
  return (await changedPathsBelow(store, from, to, '')).sort();
}

/** `prefix` is a binary string (see git-objects.ts); the paths returned are readable. */
async function changedPathsBelow(store: ObjectStore, from: string, to: string, prefix: string): Promise<string[]> {
  if (from === to) return [];
  const [fromEntries, toEntries] = await Promise.all([store.readTree(from), store.readTree(to)]);
  const fromByName = byName(fromEntries);
  const toByName = byName(toEntries);
  const paths: string[] = [];
  for (const name of new Set([...fromByName.keys(), ...toByName.keys()])) {
    const before = fromByName.get(name);
    const after = toByName.get(name);
    if (sameEntry(before, after)) continue;
    const path = `${prefix}${name}`;
    const beforeTree = before !== undefined && isTreeEntry(before) ? before.oid : null;
    const afterTree = after !== undefined && isTreeEntry(after) ? after.oid : null;
    if (beforeTree !== null || afterTree !== null) {
      paths.push(...(await changedPathsBelow(store, beforeTree ?? EMPTY_TREE, afterTree ?? EMPTY_TREE, `${path}/`)));
    }
    if ((before !== undefined && !isTreeEntry(before)) || (after !== undefined && !isTreeEntry(after))) paths.push(readableText(path));
  }
  return paths;
}

/** git's empty tree, which every repository can read without having it stored. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
