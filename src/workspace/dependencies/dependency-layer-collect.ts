import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { discard, LAYER_KEY_PATTERN, lastUsedMs, liveUsers, recordDirOf, RECORDS_DIR, STAGING_DIR, TRASH_DIR } from './dependency-layer-records.js';
import { isDirectory, pathExists } from '../files/path-exists.js';

export interface CollectDependencyLayersOptions {
  /** How many layers to keep besides the protected ones, most recently used first; 3 when not given. */
  readonly keep?: number;
  /** Keys never deleted, such as the layer the current run uses. */
  readonly protect?: readonly string[];
}

/** What a collection did: the keys deleted, and anything it could not delete with the reason. */
export interface CollectedDependencyLayers {
  readonly removed: readonly string[];
  readonly problems: readonly string[];
}

const DEFAULT_KEEP = 3;

/**
 * Deletes old layers from the cache: keeps the `keep` most recently used and the protected
 * ones, and never deletes a layer a live workspace uses (one recorded by `recordLayerUse` whose
 * folder still exists). Also clears installs abandoned by processes that are gone and
 * leftovers of earlier deletions. Never throws; what it could not do is in `problems`.
 */
export async function collectDependencyLayers(cacheDir: string, options: CollectDependencyLayersOptions = {}): Promise<CollectedDependencyLayers> {
  const removed: string[] = [];
  const problems: string[] = [];
  if (!(await isDirectory(cacheDir))) return { removed, problems };
  const keep = options.keep ?? DEFAULT_KEEP;
  const protect = new Set(options.protect ?? []);
  const keys = (await namesIn(cacheDir)).filter((name) => LAYER_KEY_PATTERN.test(name));
  const layers = await Promise.all(keys.map(async (key) => ({ key, lastUsed: await lastUsedMs(join(cacheDir, key)) })));
  layers.sort((a, b) => b.lastUsed - a.lastUsed);
  let kept = 0;
  for (const { key } of layers) {
    const layerDir = join(cacheDir, key);
    const inUse = (await liveUsers(layerDir)).length > 0;
    if (protect.has(key) || inUse) continue;
    if (kept < keep) {
      kept += 1;
      continue;
    }
    const problem = await discard(cacheDir, layerDir);
    if (problem !== null) {
      problems.push(problem);
      continue;
    }
    await rm(recordDirOf(layerDir), { recursive: true, force: true }).catch(() => undefined);
    removed.push(key);
  }
  await clearRecordsWithoutLayers(cacheDir, problems);
  await clearAbandonedStaging(cacheDir, problems);
  await clearTrash(cacheDir, problems);
  return { removed, problems };
}

/** Records of layers that are gone and that no live workspace names. */
async function clearRecordsWithoutLayers(cacheDir: string, problems: string[]): Promise<void> {
  for (const key of await namesIn(join(cacheDir, RECORDS_DIR))) {
    const layerDir = join(cacheDir, key);
    if ((await pathExists(layerDir)) || (await liveUsers(layerDir)).length > 0) continue;
    await rm(recordDirOf(layerDir), { recursive: true, force: true }).catch((error: unknown) => problems.push(`cannot delete ${recordDirOf(layerDir)}: ${String(error)}`));
  }
}

/** Staging folders are named `<key prefix or purpose>-<pid>-<random>`; one whose process is gone was abandoned. */
async function clearAbandonedStaging(cacheDir: string, problems: string[]): Promise<void> {
  const stagingDir = join(cacheDir, STAGING_DIR);
  for (const name of await namesIn(stagingDir)) {
    const pid = Number(/^[0-9a-z]+-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
    if (Number.isInteger(pid) && processIsAlive(pid)) continue;
    await rm(join(stagingDir, name), { recursive: true, force: true }).catch((error: unknown) => problems.push(`cannot delete ${join(stagingDir, name)}: ${String(error)}`));
  }
}

async function clearTrash(cacheDir: string, problems: string[]): Promise<void> {
  const trashDir = join(cacheDir, TRASH_DIR);
  for (const name of await namesIn(trashDir)) {
    await rm(join(trashDir, name), { recursive: true, force: true }).catch((error: unknown) => problems.push(`cannot delete ${join(trashDir, name)}: ${String(error)}`));
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
