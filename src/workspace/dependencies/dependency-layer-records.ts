import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FILE_OPERATION_CONCURRENCY, forEachLimited, listFileTree } from '../files/file-tree.js';
import { pathExists } from '../files/path-exists.js';
import { errorMessage } from '../../errors/error-message.js';

/*
 * A cache directory holds one directory per layer, named by its key, holding what a workspace
 * shows: `node_modules/` (and, for a monorepo, `packages/a/node_modules/` and the like), or what
 * a project's setup made. Everything colony knows about a layer lives beside it, under
 * `.records/<key>/`, so it never appears in a workspace:
 *
 *   <cacheDir>/<key>/node_modules/     the layer
 *   <cacheDir>/.records/<key>/entries.json   the layer's entries, when one lies below the top level
 *   <cacheDir>/.records/<key>/seal.json   what the layer held when it was made
 *   <cacheDir>/.records/<key>/last-used   touched whenever a run or a workspace uses it
 *   <cacheDir>/.records/<key>/users/<id>  one per workspace the layer was linked into: its path
 *   <cacheDir>/.staging/…              installs in progress
 *   <cacheDir>/.trash/…                layers moved aside before deletion
 */

/** A layer's fingerprint: file count, total size and newest modification time of its files. */
export interface LayerSeal {
  readonly files: number;
  readonly bytes: number;
  readonly newestMtimeMs: number;
}

export const RECORDS_DIR = '.records';
export const STAGING_DIR = '.staging';
export const TRASH_DIR = '.trash';
export const LAYER_KEY_PATTERN = /^[0-9a-f]{64}$/;

/** Where colony keeps what it knows about the layer at `layerDir`. */
export function recordDirOf(layerDir: string): string {
  return join(dirname(layerDir), RECORDS_DIR, basename(layerDir));
}

/**
 * Makes every file under `root` read-only and measures the tree. Read-only files turn an
 * in-place write through a hard link, by anyone but root, into an error instead of a change
 * to the copy every workspace shares; replacing a file (what npm, git and editors do) is
 * unaffected, because that only needs the workspace's own directory to be writable.
 */
export async function sealTree(root: string): Promise<LayerSeal> {
  return measureTree(root, async (path, mode) => {
    if ((mode & 0o222) !== 0) await chmod(path, mode & ~0o222 & 0o7777);
  });
}

/** The fingerprint of the tree under `root` as it is now. */
export async function measureTree(root: string, visit?: (path: string, mode: number) => Promise<void>): Promise<LayerSeal> {
  const tree = await listFileTree(root);
  let bytes = 0;
  let newestMtimeMs = 0;
  await forEachLimited(tree.files, FILE_OPERATION_CONCURRENCY, async (file) => {
    const path = join(root, file);
    const info = await lstat(path);
    bytes += info.size;
    newestMtimeMs = Math.max(newestMtimeMs, info.mtimeMs);
    await visit?.(path, info.mode);
  });
  return { files: tree.files.length, bytes, newestMtimeMs };
}

/** One entry of a layer: a path relative to the layer's folder that a workspace gets whole. */
export interface LayerEntry {
  readonly path: string;
  readonly directory: boolean;
}

/**
 * Records the entries of a layer, which are not always its top-level names: a workspace
 * package's `packages/a/node_modules` lies below `packages/`, which a workspace's checkout has
 * already. Written before the layer is renamed into place and again after.
 */
export async function writeLayerEntries(layerDir: string, entries: readonly LayerEntry[]): Promise<void> {
  const recordDir = recordDirOf(layerDir);
  await mkdir(recordDir, { recursive: true });
  await writeAtomically(join(recordDir, 'entries.json'), JSON.stringify(entries));
}

/**
 * The entries of the layer at `layerDir`: the ones recorded, else its top-level names. Throws
 * when the layer cannot be read.
 */
export async function readLayerEntries(layerDir: string): Promise<LayerEntry[]> {
  try {
    const value: unknown = JSON.parse(await readFile(join(recordDirOf(layerDir), 'entries.json'), 'utf8'));
    if (Array.isArray(value) && value.every(isLayerEntry)) return value;
  } catch {
    // No record: the layer's entries are its top-level names.
  }
  return (await readdir(layerDir, { withFileTypes: true })).map((entry) => ({ path: entry.name, directory: entry.isDirectory() }));
}

function isLayerEntry(value: unknown): value is LayerEntry {
  if (typeof value !== 'object' || value === null) return false;
  const { path, directory } = value as Record<string, unknown>;
  return typeof path === 'string' && path !== '' && !path.split('/').includes('..') && !path.startsWith('/') && typeof directory === 'boolean';
}

export async function writeSeal(layerDir: string, seal: LayerSeal): Promise<void> {
  const recordDir = recordDirOf(layerDir);
  await mkdir(recordDir, { recursive: true });
  await writeAtomically(join(recordDir, 'seal.json'), JSON.stringify(seal));
}

export async function readSeal(layerDir: string): Promise<LayerSeal | null> {
  try {
    const value = JSON.parse(await readFile(join(recordDirOf(layerDir), 'seal.json'), 'utf8')) as Partial<LayerSeal>;
    if (typeof value.files !== 'number' || typeof value.bytes !== 'number' || typeof value.newestMtimeMs !== 'number') return null;
    return { files: value.files, bytes: value.bytes, newestMtimeMs: value.newestMtimeMs };
  } catch {
    return null;
  }
}

export function sameSeal(a: LayerSeal, b: LayerSeal): boolean {
  return a.files === b.files && a.bytes === b.bytes && a.newestMtimeMs === b.newestMtimeMs;
}

/** Marks the layer as used now; the garbage collector keeps the most recently used layers. */
export async function touchLastUsed(layerDir: string): Promise<void> {
  const recordDir = recordDirOf(layerDir);
  await mkdir(recordDir, { recursive: true });
  await writeFile(join(recordDir, 'last-used'), `${new Date().toISOString()}\n`);
}

/** When the layer was last used, in ms since the epoch: the `last-used` record, else the layer's own folder. */
export async function lastUsedMs(layerDir: string): Promise<number> {
  for (const path of [join(recordDirOf(layerDir), 'last-used'), layerDir]) {
    try {
      return (await stat(path)).mtimeMs;
    } catch {
      // Try the next one.
    }
  }
  return 0;
}

/**
 * Records that the workspace at `workspacePath` uses the layer, so the garbage collector leaves
 * the layer alone while that workspace exists. A workspace provider that stacks the layer
 * (an overlay's lower directory) calls this too.
 */
export async function recordLayerUse(layerDir: string, workspacePath: string): Promise<void> {
  const usersDir = join(recordDirOf(layerDir), 'users');
  await mkdir(usersDir, { recursive: true });
  const id = createHash('sha256').update(workspacePath).digest('hex').slice(0, 24);
  await writeAtomically(join(usersDir, id), workspacePath);
  await touchLastUsed(layerDir);
}

/**
 * The workspaces recorded as using the layer that still exist. Records of workspaces that are
 * gone are deleted on the way.
 */
export async function liveUsers(layerDir: string): Promise<string[]> {
  const usersDir = join(recordDirOf(layerDir), 'users');
  let names: string[];
  try {
    names = await readdir(usersDir);
  } catch {
    return [];
  }
  const live: string[] = [];
  for (const name of names) {
    const record = join(usersDir, name);
    let workspacePath: string;
    try {
      workspacePath = (await readFile(record, 'utf8')).trim();
    } catch {
      continue;
    }
    if (workspacePath !== '' && (await pathExists(workspacePath))) live.push(workspacePath);
    else await rm(record, { force: true });
  }
  return live.sort();
}

/**
 * Moves `path` into the cache's trash with one rename (so no reader ever sees it half
 * deleted), then deletes it. Returns null, or why it could not be moved or deleted.
 */
export async function discard(cacheDir: string, path: string): Promise<string | null> {
  const trash = join(cacheDir, TRASH_DIR);
  const aside = join(trash, `${basename(path)}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(trash, { recursive: true });
    await rename(path, aside);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return null;
    return `cannot move ${path} aside: ${errorMessage(error)}`;
  }
  try {
    await rm(aside, { recursive: true, force: true });
    return null;
  } catch (error) {
    return `moved ${path} to ${aside} but cannot delete it: ${errorMessage(error)}`;
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
