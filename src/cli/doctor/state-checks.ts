import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { diskReserveBytes } from '../../orchestrator/disk-guard.js';
import { DEFAULT_DISK_CAP_SHARE } from '../../orchestrator/setup/workspace-setup.js';
import { formatBytes } from '../../sandbox/process/command-limits.js';
import type { OverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { errorMessage } from '../../errors/error-message.js';
import { shellWord } from '../../errors/shell-word.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

/** What `statfs` says of a file system, in the fields the disk check reads. */
export interface FileSystemSpace {
  /** Blocks free to an unprivileged user. */
  readonly bavail: number;
  readonly blocks: number;
  readonly bsize: number;
}

/** Free space under which the disk line warns: workspaces would get under a fifth of it by default. */
export const LOW_DISK_BYTES = 2 * 1024 ** 3;

/**
 * Where the state directory is or would be made: itself when it exists, else its parent, which
 * a run makes it in (only the last component, as `prepareStateDir` does). Null when neither is
 * a directory.
 */
export function stateHome(stateDir: string): string | null {
  for (const candidate of [stateDir, dirname(stateDir)]) {
    if (existsSync(candidate)) return statSync(candidate).isDirectory() ? candidate : null;
  }
  return null;
}

/** Whether colony can write its state (the event log, workspaces, spill files) where `--state` points. */
export async function checkStateDir(stateDir: string): Promise<DoctorCheck> {
  if (existsSync(stateDir) && !statSync(stateDir).isDirectory()) {
    return fail('state directory', `${stateDir} is a file, not a directory`, 'remove or move that file, or pass another path with --state');
  }
  const home = stateHome(stateDir);
  if (home === null) {
    return fail('state directory', `${stateDir} cannot be made: ${dirname(stateDir)} is not a directory`, `create ${dirname(stateDir)}, or pass another path with --state`);
  }
  try {
    await rm(await mkdtemp(join(home, '.colony-doctor-')), { recursive: true });
  } catch (error) {
    return fail('state directory', `cannot write in ${home}: ${errorMessage(error)}`, `make ${home} writable for the user that runs colony, or pass another path with --state`);
  }
  return pass('state directory', home === stateDir ? `${stateDir} can be written` : `${stateDir} can be made (${home} can be written)`);
}

/**
 * The free space where the state directory goes, which holds every workspace as well: below
 * the disk guard's reserve no agent starts; below LOW_DISK_BYTES workspaces get little room.
 */
export async function checkDisk(stateDir: string, statfs: (path: string) => Promise<FileSystemSpace>): Promise<DoctorCheck> {
  const home = stateHome(stateDir);
  if (home === null) return fail('disk', `there is no directory at or above ${stateDir} to measure`, `create ${dirname(stateDir)}, or pass another path with --state`);
  let space: FileSystemSpace;
  try {
    space = await statfs(home);
  } catch (error) {
    return fail('disk', `cannot measure the free space in ${home}: ${errorMessage(error)}`, 'pass a --state on a local file system');
  }
  const free = space.bavail * space.bsize;
  const reserve = diskReserveBytes(space.blocks * space.bsize);
  const where = `${formatBytes(free)} free in ${home}, where the state directory and the workspaces go`;
  const cleanup = `free space there (\`colony clean --state ${shellWord(stateDir)}\` removes what ended runs left, never a live run's), or pass a --state on a larger disk`;
  if (free < reserve) return fail('disk', `only ${where}: below ${formatBytes(reserve)} no agent starts`, cleanup);
  const cap = Math.floor(free * DEFAULT_DISK_CAP_SHARE);
  if (free < LOW_DISK_BYTES) return warn('disk', `only ${where}: workspaces may take ${formatBytes(cap)} together by default`, cleanup);
  return pass('disk', `${where}; workspaces may take ${formatBytes(cap)} together by default`);
}

/**
 * Whether workspaces can be overlay mounts on one shared checkout (cheap) rather than a git
 * worktree each (a full checkout). A run with `--workspaces auto` falls back to worktrees, so
 * this only warns. The probe runs in a directory of its own beside the state, removed after.
 */
export async function checkOverlay(stateDir: string, probe: (dir: string) => Promise<OverlaySupport>): Promise<DoctorCheck> {
  const home = stateHome(stateDir);
  if (home === null) return warn('overlay workspaces', `not tried: there is no directory at or above ${stateDir}`);
  let dir: string;
  try {
    dir = await mkdtemp(join(home, '.colony-doctor-overlay-'));
  } catch (error) {
    return warn('overlay workspaces', `not tried: cannot make a directory in ${home}: ${errorMessage(error)}`);
  }
  try {
    const support = await probe(dir);
    if (support.ok) return pass('overlay workspaces', `overlay mounts work in ${home}: each workspace is a layer over one shared checkout`);
    return warn(
      'overlay workspaces',
      `${support.error}, so each workspace will be a git worktree (a full checkout)`,
      'run colony as root on Linux, with --state on a file system that can hold an overlay (ext4, xfs, btrfs), for overlay workspaces',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
