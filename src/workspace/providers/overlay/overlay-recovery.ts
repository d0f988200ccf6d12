import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFailure, runGit } from '../../git/git.js';
import type { BaseCheckout } from './overlay-bases.js';
import { mountOverlay, readOverlayMounts } from './overlay-mount.js';
import { isDirectory, pathExists } from '../../files/path-exists.js';
import type { Repository } from '../../git/repository.js';
import { worktreeAdminDir, writeWorktreeAdmin } from '../../git/worktree-admin.js';
import { errorMessage } from '../../../errors/error-message.js';

/** The file in `layers/<id>/` that says how an overlay workspace was made, so it can be mounted again. */
export const OVERLAY_RECORD_FILE = 'workspace.json';

/** How an overlay workspace was made: enough to mount it again after its process (or the machine) went away. */
export interface OverlayRecord {
  readonly id: string;
  readonly path: string;
  readonly branch: string;
  /** Main commit the workspace started from. */
  readonly baseCommit: string;
  /** The commit of the base checkout below it (older than `baseCommit` when it was brought forward). */
  readonly base: string;
  readonly sharedLayers: readonly string[];
}

function isRecord(value: unknown): value is OverlayRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    ['id', 'path', 'branch', 'baseCommit', 'base'].every((key) => typeof record[key] === 'string') &&
    Array.isArray(record.sharedLayers) &&
    record.sharedLayers.every((layer) => typeof layer === 'string')
  );
}

/** Every workspace record under `layersDir`, and a sentence for each entry that is not one. */
export async function readOverlayRecords(layersDir: string): Promise<{ records: OverlayRecord[]; problems: string[] }> {
  let names: string[];
  try {
    names = await readdir(layersDir);
  } catch {
    return { records: [], problems: [] };
  }
  const records: OverlayRecord[] = [];
  const problems: string[] = [];
  for (const name of names) {
    const file = join(layersDir, name, OVERLAY_RECORD_FILE);
    try {
      const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (isRecord(parsed) && parsed.id === name) records.push(parsed);
      else problems.push(`${file} is not a workspace record; ${join(layersDir, name)} was left alone.`);
    } catch (error) {
      problems.push(`Could not read ${file} (${errorMessage(error)}); ${join(layersDir, name)} was left alone.`);
    }
  }
  return { records, problems };
}

export interface RecoverOptions {
  readonly layers: { readonly upper: string; readonly work: string };
  /** The base checkout of a commit, made again if it was deleted. */
  readonly ensureBase: (commit: string) => Promise<BaseCheckout>;
}

/**
 * Makes an overlay workspace that its process left behind readable by git again: mounted (its
 * upper layer survives a reboot, the mount does not), on a base made again if it is gone, with
 * git's worktree record written again if something pruned it. A rewritten record gets an index
 * of the branch's commit, so `git status` then tells exactly what the upper layer changed.
 */
export async function recoverOverlayWorkspace(
  repo: Repository,
  record: OverlayRecord,
  options: RecoverOptions,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const mounted = (await readOverlayMounts()).some((mount) => mount.mountPoint === record.path);
  if (mounted && (await pathExists(worktreeAdminDir(repo, record.id)))) return { ok: true };
  if (!(await isDirectory(options.layers.upper))) {
    return { ok: false, error: `The overlay workspace ${record.id} has lost its upper layer ${options.layers.upper}; nothing of it is left to recover.` };
  }
  try {
    const base = await options.ensureBase(record.base);
    const recreated = !(await pathExists(worktreeAdminDir(repo, record.id)));
    if (recreated) await writeWorktreeAdmin(repo, { id: record.id, worktreePath: record.path, branch: record.branch, indexSource: base.index, method: 'overlay' });
    if (!mounted) {
      await mkdir(record.path, { recursive: true });
      const layers = { lowerDirs: [...record.sharedLayers, base.tree], upperDir: options.layers.upper, workDir: options.layers.work };
      const remounted = await mountOverlay(layers, record.path);
      if (!remounted.ok) return { ok: false, error: `The overlay workspace ${record.id} could not be mounted again: ${remounted.error}` };
    }
    if (recreated) {
      const args = ['read-tree', 'HEAD'];
      const reset = await runGit({ path: record.path, gitDir: worktreeAdminDir(repo, record.id) }, args);
      if (reset.code !== 0) return { ok: false, error: `The overlay workspace ${record.id} has no readable HEAD: ${describeFailure(args, reset)}` };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error: `The overlay workspace ${record.id} could not be recovered: ${errorMessage(error)}` };
  }
}
