import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a directory tree holds, as paths relative to its root, parents listed before their children. */
export interface FileTree {
  readonly directories: readonly string[];
  readonly files: readonly string[];
  readonly symlinks: readonly string[];
  /** Sockets, pipes and devices: nothing an install makes, and never copied. */
  readonly others: readonly string[];
}

/** How many file-system calls run at once: enough to keep libuv's thread pool busy, few enough to spare descriptors. */
export const FILE_OPERATION_CONCURRENCY = 32;

/** Lists the tree under `root` (not following symbolic links). Throws what the file system throws. */
export async function listFileTree(root: string): Promise<FileTree> {
  const directories: string[] = [];
  const files: string[] = [];
  const symlinks: string[] = [];
  const others: string[] = [];
  let level: string[] = [''];
  while (level.length > 0) {
    const next: string[] = [];
    await forEachLimited(level, FILE_OPERATION_CONCURRENCY, async (directory) => {
      const entries = await readdir(join(root, directory), { withFileTypes: true });
      for (const entry of entries) {
        const path = directory === '' ? entry.name : `${directory}/${entry.name}`;
        if (entry.isDirectory()) next.push(path);
        else if (entry.isFile()) files.push(path);
        else if (entry.isSymbolicLink()) symlinks.push(path);
        else others.push(path);
      }
    });
    // Breadth first: every parent is in `directories` before any of its children.
    next.sort();
    directories.push(...next);
    level = next;
  }
  return { directories, files: files.sort(), symlinks: symlinks.sort(), others: others.sort() };
}

/** Runs `action` on every item, at most `limit` at a time; rejects with the first failure once the running ones settle. */
export async function forEachLimited<T>(items: readonly T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (failures.length === 0 && next < items.length) {
      const item = items[next] as T;
      next += 1;
      try {
        await action(item);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}
