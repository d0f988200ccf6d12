import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** How many directories are read at once; enough to keep the disk busy without flooding libuv. */
const PARALLEL_DIRECTORIES = 8;
/** How many entries of one directory are looked at once. */
const PARALLEL_ENTRIES = 64;

export interface DiskUsageOptions {
  /**
   * Trees whose files are someone else's: a file under `roots` that is a hard link to one of
   * theirs counts nothing (a shared layer linked into a workspace belongs to the layer).
   */
  readonly alreadyCounted?: readonly string[];
}

/**
 * The bytes the trees under `roots` occupy on disk (allocated blocks, as `du -x` counts them),
 * each file counted once however many hard links to it the trees hold, and each root once even
 * when listed twice or nested in another. Like `du -x`, a walk does not cross into another
 * filesystem: a mount inside a root (an overlay workspace) is not counted through it, since
 * its files live, and are counted, elsewhere. Paths that do not exist count nothing; entries
 * that vanish while being read are skipped (a workspace may be removed meanwhile). Never throws.
 */
export async function measureDiskUsage(roots: readonly string[], options: DiskUsageOptions = {}): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  if (options.alreadyCounted !== undefined && options.alreadyCounted.length > 0) {
    await walk(options.alreadyCounted, seen, () => undefined);
  }
  await walk(roots, seen, (bytes) => {
    total += bytes;
  });
  return total;
}

/** Walks the trees under `roots`, telling `count` the bytes of every entry not in `seen` (which it fills). */
async function walk(roots: readonly string[], seen: Set<string>, count: (bytes: number) => void): Promise<void> {
  const account = async (path: string, device: bigint | null): Promise<{ directory: boolean; device: bigint } | null> => {
    let info;
    try {
      info = await lstat(path, { bigint: true });
    } catch {
      return null;
    }
    if (device !== null && info.dev !== device) return null;
    const key = `${info.dev}:${info.ino}`;
    if (seen.has(key)) return null;
    seen.add(key);
    count(Number(info.blocks) * 512);
    return { directory: info.isDirectory(), device: info.dev };
  };
  type Directory = { readonly path: string; readonly device: bigint };
  let level: Directory[] = [];
  for (const root of roots) {
    const found = await account(root, null);
    if (found?.directory === true) level.push({ path: root, device: found.device });
  }
  // Breadth first, a level at a time, a few directories at once.
  while (level.length > 0) {
    const next: Directory[] = [];
    const readDirectory = async (directory: Directory): Promise<void> => {
      let names: string[];
      try {
        names = await readdir(directory.path);
      } catch {
        return;
      }
      for (let start = 0; start < names.length; start += PARALLEL_ENTRIES) {
        const paths = names.slice(start, start + PARALLEL_ENTRIES).map((name) => join(directory.path, name));
        const found = await Promise.all(paths.map((path) => account(path, directory.device)));
        paths.forEach((path, index) => {
          if (found[index]?.directory === true) next.push({ path, device: directory.device });
        });
      }
    };
    for (let start = 0; start < level.length; start += PARALLEL_DIRECTORIES) {
      await Promise.all(level.slice(start, start + PARALLEL_DIRECTORIES).map(readDirectory));
    }
    level = next;
  }
}
