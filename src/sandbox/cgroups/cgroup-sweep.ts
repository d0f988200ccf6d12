import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { childCgroups, makeCgroupDirectory, pauseNow, readPids, removeEmptyCgroupNow, signalPids, writeCgroupFile } from './cgroup-files.js';

/**
 * What is left of a run whose process ended without `close()` (a forced quit, a crash, a
 * SIGKILL). Each run's parent holds an empty child `.owner-<pid>-<start time>` naming the
 * process that opened it (the start time, from /proc/<pid>/stat, tells a reused pid apart).
 * A run's cgroups are swept by the next opening under the same parent only when that owner is
 * gone AND no process is left anywhere in them: an idle run of a live process is empty too, so
 * emptiness alone never marks a run stale, and a cgroup with a live process is never touched.
 * A run without an owner child (made by something else) is left alone.
 */

const OWNER_PREFIX = '.owner-';
/** How long an 'exit' handler may block waiting for killed commands to leave their cgroups. */
const EXIT_DEADLINE_MS = 1_000;

/** Whether a child of a run's parent is its owner child rather than a command's cgroup. */
export function isOwnerMarker(name: string): boolean {
  return name.startsWith(OWNER_PREFIX);
}

/** The owner child's name for `pid`, or null when its start time cannot be read. */
export function ownerMarkerName(pid: number = process.pid): string | null {
  const start = processStartTime(pid);
  return start === null ? null : `${OWNER_PREFIX}${pid}-${start}`;
}

/** Marks the run's parent (its first directory) as belonging to this process; why that failed, or null. */
export function markOwner(runDirectories: readonly string[]): string | null {
  const marker = ownerMarkerName();
  const first = runDirectories[0];
  if (marker === null || first === undefined) return 'could not read this process’s start time from /proc/self/stat';
  return makeCgroupDirectory(join(first, marker));
}

/**
 * Removes the stale `colony-*` runs (but `keep`) under `parents` (one per hierarchy on v1,
 * in the same order as a run's directories); returns the names removed.
 */
export function sweepStaleRuns(parents: readonly string[], keep: string, ignore: readonly string[]): string[] {
  const names = new Set(parents.flatMap((parent) => childCgroups(parent).map((child) => basename(child))));
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith('colony-') || name === keep || ignore.includes(name)) continue;
    const directories = parents.map((parent) => join(parent, name));
    if (!ownerGone(directories) || directories.some((directory) => holdsProcesses(directory))) continue;
    if (removeRunNow(directories, false)) removed.push(name);
  }
  return removed;
}

/**
 * Kills what is left in a run's command cgroups and removes them and the run's parent, without
 * waiting on the event loop: for process 'exit', where `close()` can no longer run. Whatever
 * the kernel still refuses after EXIT_DEADLINE_MS is left for the next opening's sweep.
 */
export function removeRunCgroupsNow(runDirectories: readonly string[]): void {
  removeRunNow(runDirectories, true);
}

function removeRunNow(runDirectories: readonly string[], kill: boolean): boolean {
  const start = Date.now();
  for (;;) {
    const children = runDirectories.flatMap((directory) => childCgroups(directory));
    if (kill) for (const child of children) killNow(child);
    const left = children.filter((child) => !removeEmptyCgroupNow(child));
    if (left.length === 0 && runDirectories.every((directory) => removeEmptyCgroupNow(directory))) return true;
    if (!kill || Date.now() - start > EXIT_DEADLINE_MS) return false;
    pauseNow(5);
  }
}

/** Freeze (v1), `cgroup.kill` (v2, 5.14+), SIGKILL every process, thaw: the kill is delivered even to a frozen fork bomb. */
function killNow(directory: string): void {
  const freezer = join(directory, 'freezer.state');
  const frozen = existsSync(freezer) && writeCgroupFile(freezer, 'FROZEN') === null;
  const killFile = join(directory, 'cgroup.kill');
  if (existsSync(killFile)) writeCgroupFile(killFile, '1');
  signalPids(readPids(join(directory, 'cgroup.procs')), 'SIGKILL');
  if (frozen) writeCgroupFile(freezer, 'THAWED');
}

function ownerGone(runDirectories: readonly string[]): boolean {
  const markers = runDirectories.flatMap((directory) => childCgroups(directory).map((child) => basename(child))).filter(isOwnerMarker);
  if (markers.length === 0) return false;
  return markers.every((marker) => {
    const [pid, start] = marker.slice(OWNER_PREFIX.length).split('-').map(Number);
    return pid === undefined || start === undefined || processStartTime(pid) !== start;
  });
}

function holdsProcesses(directory: string): boolean {
  return readPids(join(directory, 'cgroup.procs')).length > 0 || childCgroups(directory).some((child) => holdsProcesses(child));
}

/** Field 22 of /proc/<pid>/stat (clock ticks since boot), or null when the process is gone. */
function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces; fields after it start at 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isInteger(start) ? start : null;
  } catch {
    return null;
  }
}
