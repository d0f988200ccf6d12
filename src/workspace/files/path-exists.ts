import { lstat, stat } from 'node:fs/promises';

/** The errors that prove nothing is at a path. Any other failure to look proves nothing. */
const ABSENT_CODES: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR']);

function provesAbsence(error: unknown): boolean {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && ABSENT_CODES.has(error.code);
}

/**
 * Whether anything is at `path`: a file, a directory, or a symbolic link, even a dangling
 * one. Only a lookup that proves the path absent counts as missing; a failure to look (no
 * permission, an I/O error) counts as present, so a caller deciding whether something could
 * be overwritten or lost errs toward leaving it alone.
 */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    return !provesAbsence(error);
  }
}

/** Whether `path` is a directory or a symbolic link to one. False when it cannot be looked at. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
