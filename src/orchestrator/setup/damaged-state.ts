import { existsSync } from 'node:fs';
import { realpath, rename } from 'node:fs/promises';
import { relative } from 'node:path';
import { DAMAGED_FOLDER_SUFFIX, DamagedStoreError } from '../../store/sqlite/damaged-store-error.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import { excludeFromGit, type Repository } from '../../workspace/git/repository.js';
import { dropWorktreeRecords, worktreeRecordsUnder } from '../../workspace/git/worktree-records.js';
import { unmountOverlaysUnder } from '../../workspace/providers/overlay/overlay-mount.js';
import { keepBranchAsSalvage } from '../../workspace/salvage-refs.js';
import { errorMessage } from '../../errors/error-message.js';
import { overlayMountsUnder } from './state-clean.js';
import { eventsDatabasePath } from './state-directory.js';

/**
 * The damage that keeps the store of a state directory from opening, as its `DamagedStoreError`
 * says it, or null when it opens (or there is none yet). Other failures to open are thrown.
 */
export async function storeDamage(stateDir: string): Promise<DamagedStoreError | null> {
  const path = eventsDatabasePath(stateDir);
  if (!existsSync(path)) return null;
  try {
    await openSqliteEventStore(path).close();
    await openSqliteTaskStore(path).close();
    return null;
  } catch (error) {
    if (error instanceof DamagedStoreError) return error;
    throw error;
  }
}

export type MovedAside =
  | {
      readonly ok: true;
      /** Where the state directory is now, whole. */
      readonly movedTo: string;
      /** Overlay mounts under it that were taken down. */
      readonly mounts: number;
      /** git's records of worktrees under it that were deleted (their files moved with it). */
      readonly worktreeRecords: number;
      /** Salvage refs made for workspace branches whose commits main lacks. */
      readonly salvaged: readonly string[];
      readonly problems: readonly string[];
    }
  | { readonly ok: false; readonly error: string };

/**
 * Moves a state directory whose store is damaged out of the way, keeping every file of it:
 * first every overlay mounted under it is taken down (a mount cannot move with its folder, and
 * would be left pointing into it), then git's records of the worktrees under it are deleted
 * (they would name folders that are no longer there), each workspace's branch going with its
 * record, its commits kept under a salvage ref. The folder is renamed to `<state>.damaged`
 * (`.damaged-2`, `-3`, … when taken) and kept out of `git status`. Nothing is moved when a
 * mount stays up. The caller holds the repository's run lock, so no run starts meanwhile.
 */
export async function moveDamagedStateAside(repo: Repository, stateDir: string): Promise<MovedAside> {
  const mountsBefore = await overlayMountsUnder(stateDir);
  try {
    // /proc/self/mountinfo names mounts by their real paths.
    await unmountOverlaysUnder(await realpath(stateDir));
  } catch (error) {
    return { ok: false, error: `nothing was moved: an overlay under ${stateDir} stays mounted (${errorMessage(error)}). Stop what uses it, then run this again.` };
  }
  const mounts = mountsBefore - (await overlayMountsUnder(stateDir));
  const records = await worktreeRecordsUnder(repo, stateDir);
  const dropped = await dropWorktreeRecords(repo, records);
  const problems = [...dropped.problems];
  const salvaged: string[] = [];
  for (const record of records) {
    if (record.branch === null || !record.branch.startsWith('colony/') || !dropped.dropped.includes(record.path)) continue;
    const kept = await keepBranchAsSalvage(repo, record.branch, `colony clean --damaged kept the commits of the workspace ${record.name}`);
    if (!kept.ok) problems.push(kept.error);
    else if (kept.salvageRef !== null) salvaged.push(kept.salvageRef);
  }
  const movedTo = freeAsideName(stateDir);
  try {
    await rename(stateDir, movedTo);
  } catch (error) {
    return { ok: false, error: `${stateDir} could not be moved to ${movedTo}: ${errorMessage(error)}. Its mounts and worktree records are gone; move it by hand.` };
  }
  const inside = relative(repo.root, movedTo);
  if (!inside.startsWith('..') && inside !== '') await excludeFromGit(repo, `/${inside}/`);
  return { ok: true, movedTo, mounts, worktreeRecords: dropped.dropped.length, salvaged, problems };
}

/** `<state>.damaged`, or the first of `<state>.damaged-2`, `-3`, … that is not taken. */
export function freeAsideName(stateDir: string, taken: (path: string) => boolean = existsSync): string {
  const first = `${stateDir}${DAMAGED_FOLDER_SUFFIX}`;
  if (!taken(first)) return first;
  for (let n = 2; ; n += 1) {
    const candidate = `${first}-${n}`;
    if (!taken(candidate)) return candidate;
  }
}
