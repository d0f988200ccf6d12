import { copyFile, constants, link, lstat, mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

const PARALLEL_FILES = 64;

/**
 * Checks every shared layer is an absolute path to a directory. Returns the problem in a
 * sentence, or null when all are usable.
 */
export async function checkSharedLayers(layers: readonly string[]): Promise<string | null> {
  for (const layer of layers) {
    if (!isAbsolute(layer)) return `The shared layer ${JSON.stringify(layer)} is not an absolute path.`;
    try {
      if (!(await lstat(layer)).isDirectory()) return `The shared layer ${layer} is not a directory.`;
    } catch {
      return `The shared layer ${layer} does not exist.`;
    }
  }
  return null;
}

/**
 * Puts the contents of `layers` into `target` as hard links, as `cp -al` would: directories
 * are made, files are linked (copied when the layer is on another filesystem), symbolic links
 * are recreated. The earliest layer holding a path wins, and a layer's file replaces a file
 * the checkout has at that path. Deleting or replacing a linked file in the workspace leaves
 * the layer alone; writing into a linked file in place would change it for everyone, which is
 * the overlay method's advantage. Throws when the disk refuses.
 */
export async function linkSharedLayers(layers: readonly string[], target: string): Promise<void> {
  const placed = new Set<string>();
  for (const layer of layers) await linkTree(layer, target, '', placed);
}

async function linkTree(layer: string, target: string, relative: string, placed: Set<string>): Promise<void> {
  const entries = await readdir(join(layer, relative), { withFileTypes: true });
  const files = entries.filter((entry) => !entry.isDirectory());
  // Files of one directory are linked a batch at a time: thousands of small files is the usual case.
  for (let start = 0; start < files.length; start += PARALLEL_FILES) {
    await Promise.all(files.slice(start, start + PARALLEL_FILES).map((entry) => placeFile(layer, target, join(relative, entry.name), placed)));
  }
  for (const entry of entries.filter((candidate) => candidate.isDirectory())) {
    const path = join(relative, entry.name);
    if (path === '.git') continue;
    const destination = join(target, path);
    if (placed.has(path) && !(await isRealDirectory(destination))) continue;
    if (!(await isRealDirectory(destination))) {
      await rm(destination, { force: true, recursive: true });
      await mkdir(destination, { mode: (await lstat(join(layer, path))).mode & 0o7777 });
    }
    placed.add(path);
    await linkTree(layer, target, path, placed);
  }
}

async function placeFile(layer: string, target: string, path: string, placed: Set<string>): Promise<void> {
  if (path === '.git' || placed.has(path)) return;
  placed.add(path);
  const source = join(layer, path);
  const destination = join(target, path);
  const place = async () => {
    if ((await lstat(source)).isSymbolicLink()) await symlink(await readlink(source), destination);
    else await linkOrCopy(source, destination);
  };
  try {
    await place();
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
    // The checkout has something at this path; the layer's entry hides it.
    await rm(destination, { force: true, recursive: true });
    await place();
  }
}

async function isRealDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function linkOrCopy(source: string, destination: string): Promise<void> {
  try {
    await link(source, destination);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EXDEV')) throw error;
    // Another filesystem: a copy (a reflink where the filesystem can) is the best there is.
    await copyFile(source, destination, constants.COPYFILE_FICLONE);
  }
}
