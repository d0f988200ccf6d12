import { lstat, readdir, readFile, readlink, realpath, unlink } from 'node:fs/promises';
import { sep } from 'node:path';

/**
 * git guards a file by creating `<file>.lock` exclusively and renaming it over the file when
 * done; a git killed in between (with the process that ran it) leaves the lock behind, and
 * every later git that needs the file fails with "File exists" until someone deletes it.
 * Deleting a lock a live git still holds would let two writers interleave, so a lock counts as
 * stale only when no live process holds it:
 *
 * - no process has the file open (every `/proc/<pid>/fd` link is read), and
 * - no git process is at work in any of the given places (its `/proc/<pid>/cwd`): git closes a
 *   lock file once it has written it and holds it closed until the rename (a ref between
 *   `prepare` and `commit`, an index while `git commit` finishes), so an open file alone does
 *   not prove every holder.
 *
 * Without `/proc` nothing is deleted. Processes of other users can be looked into by root
 * only: a caller that is not root does not see whether one of them holds a lock.
 */

/** What `/proc` shows of the live processes, read once. */
interface ProcessView {
  /** The real path of every file some live process has open. */
  readonly openFiles: ReadonlySet<string>;
  /** The working directories of live git processes. */
  readonly gitDirectories: readonly string[];
}

async function viewProcesses(): Promise<ProcessView | null> {
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const openFiles = new Set<string>();
  const gitDirectories: string[] = [];
  // A process may end while it is being read: whatever cannot be read any more is skipped.
  await Promise.all(
    pids.map(async (pid) => {
      const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      const targets = await Promise.all(descriptors.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => null)));
      for (const target of targets) if (target !== null) openFiles.add(target);
      const command = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
      if (command !== 'git' && !command.startsWith('git-')) return;
      const directory = await readlink(`/proc/${pid}/cwd`).catch(() => null);
      if (directory !== null) gitDirectories.push(directory);
    }),
  );
  return { openFiles, gitDirectories };
}

function isInside(path: string, place: string): boolean {
  return path === place || path.startsWith(place.endsWith(sep) ? place : `${place}${sep}`);
}

interface LockIdentity {
  readonly path: string;
  readonly realPath: string;
  readonly device: number;
  readonly inode: number;
}

async function identify(path: string): Promise<LockIdentity | null> {
  try {
    const info = await lstat(path);
    if (!info.isFile()) return null;
    return { path, realPath: await realpath(path), device: info.dev, inode: info.ino };
  } catch {
    return null;
  }
}

/**
 * Deletes those of `locks` (paths of git lock files) that no live process holds, by the rules
 * above, and returns their paths; the rest are left as they are. `places` are the directories
 * a git holding one of them would be working in (the checkout, the git directory). A lock
 * replaced meanwhile (another file at that path than the one looked at) is left alone. Never
 * throws.
 */
export async function removeStaleLocks(locks: readonly string[], places: readonly string[]): Promise<string[]> {
  const found = (await Promise.all(locks.map(identify))).filter((lock) => lock !== null);
  if (found.length === 0) return [];
  const processes = await viewProcesses();
  if (processes === null) return [];
  const realPlaces = await Promise.all(places.map((place) => realpath(place).catch(() => place)));
  if (processes.gitDirectories.some((directory) => realPlaces.some((place) => isInside(directory, place)))) return [];
  const removed: string[] = [];
  for (const lock of found) {
    if (processes.openFiles.has(lock.realPath)) continue;
    const now = await lstat(lock.path).catch(() => null);
    if (now === null || now.dev !== lock.device || now.ino !== lock.inode) continue;
    try {
      await unlink(lock.path);
      removed.push(lock.path);
    } catch {
      // Deleted by someone else meanwhile, or not ours to delete: either way it is not removed here.
    }
  }
  return removed;
}
