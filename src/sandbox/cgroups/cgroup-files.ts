import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors/error-message.js';

/**
 * Small, synchronous operations on cgroup files. Each is one system call into the kernel's
 * cgroup file system, cheaper than a trip through libuv's thread pool; only waiting is async.
 */

/** Writes `value` to a cgroup file; the kernel applies it at once. Returns why it failed, or null. */
export function writeCgroupFile(path: string, value: string): string | null {
  try {
    // The kernel refuses to create a file in a cgroup, so a missing control file (a controller
    // not enabled) is an error here, as it should be.
    writeFileSync(path, value);
    return null;
  } catch (error) {
    return `could not write "${value}" to ${path}: ${errorMessage(error)}`;
  }
}

export function readCgroupFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The processes listed in a `cgroup.procs` file; none when it is gone. */
export function readPids(procsFile: string): number[] {
  const text = readCgroupFile(procsFile) ?? '';
  return text
    .split('\n')
    .map((line) => Number(line))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** The number after `key` in a flat keyed file (`oom_kill 2`, `populated 0`), or null. */
export function readKeyedNumber(path: string, key: string): number | null {
  const text = readCgroupFile(path);
  if (text === null) return null;
  for (const line of text.split('\n')) {
    const [name, value] = line.trim().split(/\s+/);
    if (name === key && value !== undefined) return Number(value);
  }
  return null;
}

/** Sends `signal` to each pid but those in `except`; a pid already gone is skipped. */
export function signalPids(pids: readonly number[], signal: NodeJS.Signals, except: readonly number[] = []): void {
  for (const pid of pids) {
    if (except.includes(pid)) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: it exited between the listing and the signal.
    }
  }
}

/** Makes a cgroup directory; an existing one is fine. Returns why it failed, or null. */
export function makeCgroupDirectory(path: string): string | null {
  try {
    mkdirSync(path);
    return null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    return `could not make the cgroup ${path}: ${errorMessage(error)}`;
  }
}

/** The child cgroups of `path` (directories), none when it is gone. */
export function childCgroups(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(path, entry.name));
  } catch {
    return [];
  }
}

/**
 * Removes an empty cgroup. The kernel refuses (EBUSY) while a process that was just killed is
 * still on its way out, so this retries until `deadlineMs`. A cgroup already gone is fine.
 */
export async function removeCgroupDirectory(path: string, deadlineMs = 5_000): Promise<string | null> {
  const start = Date.now();
  for (;;) {
    try {
      rmdirSync(path);
      return null;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      if (code !== 'EBUSY' || Date.now() - start > deadlineMs) return `could not remove the cgroup ${path}: ${errorMessage(error)}`;
    }
    await pause(5);
  }
}

/** Removes a cgroup now if the kernel lets it (it is empty and has no children); whether it is gone. */
export function removeEmptyCgroupNow(path: string): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Blocks the thread for `ms`: for an 'exit' handler, where nothing asynchronous runs any more. */
export function pauseNow(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Polls `condition` every few milliseconds until it holds or `deadlineMs` passes. */
export async function waitFor(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > deadlineMs) return false;
    await pause(2);
  }
  return true;
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

