import { realpath, rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import { errorMessage } from '../../errors/error-message.js';
import { collectDependencyLayers } from '../../workspace/dependencies/dependency-layer-collect.js';
import { removeLeftoverViews } from '../../workspace/checkout/main-view.js';
import { measureDiskUsage } from '../../workspace/files/disk-usage.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import type { Repository } from '../../workspace/git/repository.js';
import { dropWorktreeRecords, worktreeRecordsUnder, type WorktreeRecord } from '../../workspace/git/worktree-records.js';
import { readOverlayMounts } from '../../workspace/providers/overlay/overlay-mount.js';
import { createOverlayProvider } from '../../workspace/providers/overlay/overlay-provider.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { keepBranchAsSalvage } from '../../workspace/salvage-refs.js';
import type { RunLock } from './run-lock.js';
import { dependencyCacheDir } from './shared-dependencies.js';
import { overlayStorageDirOf, viewsDirOf, workspacesDirOf } from './state-directory.js';
import { sweepWorkspaces } from './workspace-sweep.js';

/**
 * Where agents' commands spill the output they did not show (`<state>/output/<agent>/`, see
 * `command-sandbox.ts`): the files a model was told to read the rest of a long output from.
 */
export function spillFilesDirOf(stateDir: string): string {
  return join(stateDir, 'output');
}

export interface CleanLeftoversOptions {
  readonly repo: Repository;
  readonly stateDir: string;
  /** The state directory's run lock, held by the caller: no run works here while it is. */
  readonly lock: RunLock;
  /**
   * Keep what an unfinished run needs for `colony resume`: its workspaces (and the overlay
   * bases they stand on), its spill files, and the newest dependency layer.
   */
  readonly keepResumable: boolean;
  /** Where the sweep's events go: the log of the state directory's latest run, or nowhere. */
  readonly record: (event: EventBody) => void;
}

/** What cleaning freed, and what it left and why. */
export interface CleanTally {
  /** Overlay mounts under the state directory taken down. */
  readonly mounts: number;
  /** Workspaces removed, their unlanded work salvaged first. */
  readonly workspaces: number;
  /** git's records of worktrees under the state directory that went (workspaces and views). */
  readonly worktreeRecords: number;
  /** Bytes freed on disk: what the workspaces, views, dependency layers and spill files took less what they take now. */
  readonly bytes: number;
  /** Workspaces kept because their work could not be read or saved, with why. */
  readonly kept: readonly { readonly path: string; readonly reason: string }[];
  /** What could not be done or made sense of, one sentence each. */
  readonly problems: readonly string[];
}

/**
 * Removes what runs that will not go on left in a state directory, as a run's own start and end
 * would, losing no work: workspaces are swept (unlanded work salvaged, overlays unmounted, git's
 * records and branches removed), then overlay bases, views, dependency layers no workspace uses
 * and spill files go, and records of worktrees under the state directory whose folders are gone.
 * The event log stays. With `keepResumable`, the unfinished run's workspaces, their bases and
 * its spill files stay. Throws only when called without the state directory's run lock held.
 */
export async function cleanLeftovers(options: CleanLeftoversOptions): Promise<CleanTally> {
  const { repo, stateDir, lock, record } = options;
  const roots = [workspacesDirOf(stateDir), viewsDirOf(stateDir), dependencyCacheDir(stateDir), spillFilesDirOf(stateDir)];
  const before = { mounts: await overlayMountsUnder(stateDir), records: (await worktreeRecordsUnder(repo, stateDir)).length, bytes: await measureDiskUsage(roots) };
  const overlay = createOverlayProvider(repo, { storageDir: overlayStorageDirOf(stateDir) });
  let workspaces = 0;
  const kept: { path: string; reason: string }[] = [];
  const problems: string[] = [];
  if (!options.keepResumable) {
    const swept = await sweepWorkspaces({ repo, stateDir, lock, workspacesDir: workspacesDirOf(stateDir), providers: [createWorktreeProvider(repo), overlay], record });
    workspaces = swept.removed.length;
    kept.push(...swept.kept);
    problems.push(...swept.problems);
    await rm(spillFilesDirOf(stateDir), { recursive: true, force: true }).catch((error: unknown) => problems.push(`the spill files in ${spillFilesDirOf(stateDir)} could not all be deleted: ${errorMessage(error)}`));
  }
  // Bases a workspace left on disk still stands on are kept (see the provider's `close`).
  await overlay.close();
  await removeLeftoverViews(repo, viewsDirOf(stateDir));
  const collected = await collectDependencyLayers(dependencyCacheDir(stateDir), { keep: options.keepResumable ? 1 : 0 });
  if (collected.removed.length > 0 || collected.problems.length > 0) {
    record({ type: 'dependencies.collected', data: { removed: [...collected.removed], problems: [...collected.problems] } });
  }
  problems.push(...collected.problems);
  problems.push(...(await dropRecordsOfVanishedWorktrees(repo, stateDir)));
  const after = { mounts: await overlayMountsUnder(stateDir), records: (await worktreeRecordsUnder(repo, stateDir)).length, bytes: await measureDiskUsage(roots) };
  return {
    mounts: Math.max(0, before.mounts - after.mounts),
    workspaces,
    worktreeRecords: Math.max(0, before.records - after.records),
    bytes: Math.max(0, before.bytes - after.bytes),
    kept,
    problems,
  };
}

/** How many overlays are mounted at or under `dir`, as /proc/self/mountinfo names them (real paths). */
export async function overlayMountsUnder(dir: string): Promise<number> {
  const real = await realpath(dir).catch(() => resolve(dir));
  return (await readOverlayMounts()).filter((mount) => mount.mountPoint === real || mount.mountPoint.startsWith(`${real}${sep}`)).length;
}

/**
 * Records of worktrees under the state directory whose folders are gone (deleted by hand, or a
 * view a killed process left half-removed), which would stay in `git worktree list` for good.
 * Kept ones stay: colony marks a workspace kept when it holds work it could not save.
 */
async function dropRecordsOfVanishedWorktrees(repo: Repository, stateDir: string): Promise<string[]> {
  const vanished: WorktreeRecord[] = [];
  for (const record of await worktreeRecordsUnder(repo, stateDir)) {
    if (!record.locked && !(await pathExists(record.path))) vanished.push(record);
  }
  const { problems } = await dropWorktreeRecords(repo, vanished);
  for (const record of vanished) {
    if (record.branch === null || !record.branch.startsWith('colony/')) continue;
    const branch = await keepBranchAsSalvage(repo, record.branch, `colony clean kept the commits of the workspace ${record.name}, whose folder was gone`);
    if (!branch.ok) problems.push(branch.error);
  }
  return problems;
}
