import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/**
 * Opening files inside a directory an agent writes, for code that must not be steered outside
 * it: the agent can turn any path component into a symbolic link at any moment, including
 * between a check and the open that follows it. Two defences: the last component is opened with
 * O_NOFOLLOW (a link there fails with ELOOP), and the file actually opened is looked up again
 * through `/proc/self/fd` and must lie inside the root, which catches a directory on the way
 * swapped for a link after it was checked. Where `/proc` is missing, only the first applies.
 */

export type ConfinedOpen = { readonly ok: true; readonly handle: FileHandle } | { readonly ok: false; readonly reason: 'link' | 'outside' | 'missing' | 'other'; readonly error: unknown };

/** True when `path` is `root` or inside it. */
export function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside === '' || (!inside.startsWith(`..${sep}`) && inside !== '..' && !isAbsolute(inside));
}

/** Where the open file really is, from the kernel, or null where `/proc/self/fd` cannot tell. */
async function openedPath(handle: FileHandle): Promise<string | null> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return null;
  }
}

function codeOf(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * Opens `path` with `flags` plus O_NOFOLLOW and O_NONBLOCK (so a FIFO an agent left cannot stall
 * the open), then checks that what was opened is inside `realRoot` (which must be a real path,
 * symlinks resolved). A file this call created outside is deleted again. Never throws.
 */
export async function openConfined(realRoot: string, path: string, flags: number, mode = 0o666): Promise<ConfinedOpen> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode);
  } catch (error) {
    const code = codeOf(error);
    // ELOOP is Linux's answer for a link at the last component; BSDs answer EMLINK or EFTYPE.
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EFTYPE') return { ok: false, reason: 'link', error };
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, reason: 'missing', error };
    return { ok: false, reason: 'other', error };
  }
  const actual = await openedPath(handle);
  if (actual !== null && !isInside(realRoot, actual)) {
    await handle.close();
    if ((flags & constants.O_CREAT) !== 0 && (flags & constants.O_EXCL) !== 0) await unlink(actual).catch(() => undefined);
    return { ok: false, reason: 'outside', error: new Error(`${path} leads outside ${realRoot}`) };
  }
  return { ok: true, handle };
}

/**
 * Whether `relativePath` under `root` reaches a regular file through real directories only: no
 * component is a symbolic link. The rule git itself follows for tracked paths.
 */
async function hasNoLinks(root: string, relativePath: string): Promise<boolean> {
  const parts = relativePath.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.includes('..')) return false;
  let current = root;
  for (const part of parts) {
    current = join(current, part);
    try {
      if ((await lstat(current)).isSymbolicLink()) return false;
    } catch {
      return true;
    }
  }
  return true;
}

/**
 * The text of the file at `relativePath` (as git names it, `/`-separated) in the checkout at
 * `root`, or null when it is missing, not a regular file, or reached through a symbolic link.
 */
export async function readCheckoutFile(root: string, relativePath: string): Promise<string | null> {
  const realRoot = await realpath(root).catch(() => null);
  if (realRoot === null || !(await hasNoLinks(realRoot, relativePath))) return null;
  const opened = await openConfined(realRoot, join(realRoot, relativePath), constants.O_RDONLY);
  if (!opened.ok) return null;
  try {
    if (!(await opened.handle.stat()).isFile()) return null;
    return await opened.handle.readFile('utf8');
  } catch {
    return null;
  } finally {
    await opened.handle.close();
  }
}

/**
 * Replaces the file at `relativePath` in the checkout at `root` with `text`, creating it if
 * missing. Throws (with the reason) when a component is a symbolic link, the path leads outside
 * the checkout, or it is not a regular file: a caller writing on git's behalf has no business there.
 */
export async function writeCheckoutFile(root: string, relativePath: string, text: string): Promise<void> {
  const realRoot = await realpath(root);
  if (!(await hasNoLinks(realRoot, relativePath))) throw new Error(`${relativePath} in ${root} goes through a symbolic link; colony writes only real files there`);
  const opened = await openConfined(realRoot, join(realRoot, relativePath), constants.O_WRONLY | constants.O_CREAT);
  if (!opened.ok) throw new Error(`cannot write ${relativePath} in ${root}: ${opened.reason === 'other' || opened.reason === 'missing' ? String(opened.error) : 'it leads outside the checkout'}`);
  try {
    if (!(await opened.handle.stat()).isFile()) throw new Error(`${relativePath} in ${root} is not a regular file`);
    await opened.handle.truncate(0);
    await opened.handle.writeFile(text);
  } finally {
    await opened.handle.close();
  }
}
