import { posix } from 'node:path';

/**
 * Paths as planners declare them and workers touch them, and whether two of them meet.
 * A path covers itself and, as a folder, everything below it: `src/text/` (or `src/text`)
 * meets `src/text/pad.js`, and `src/text/pad.js` meets only itself.
 */

/**
 * A path relative to the repository root in one spelling: forward slashes, no `./`, no `..`
 * segments, a folder keeping one trailing `/` when it was given one. Null for what is not a
 * path inside the repository: empty, absolute, leading out with `..`, or the root itself.
 */
export function normalizeRepoPath(path: string): string | null {
  const trimmed = path.trim().replace(/\\/g, '/');
  if (trimmed === '' || trimmed.includes('\u0000') || posix.isAbsolute(trimmed)) return null;
  const folder = trimmed.endsWith('/');
  const normalized = posix.normalize(trimmed).replace(/\/+$/, '');
  if (normalized === '.' || normalized === '..' || normalized.startsWith('../') || normalized === '') return null;
  return folder ? `${normalized}/` : normalized;
}

/** The path a comparison uses: without the folder's trailing slash. */
export function pathKey(path: string): string {
  // Normalised paths end in at most one slash.
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The proper ancestors of a key, outermost first: `src`, `src/text` for `src/text/pad.js`. */
export function ancestorsOf(key: string): string[] {
  const ancestors: string[] = [];
  for (let slash = key.indexOf('/'); slash !== -1; slash = key.indexOf('/', slash + 1)) ancestors.push(key.slice(0, slash));
  return ancestors;
}

/** Whether two normalised paths meet: the same path, or one a folder above the other (by whole segments). */
export function pathsMeet(first: string, second: string): boolean {
  const a = pathKey(first);
  const b = pathKey(second);
  return a === b || b.startsWith(`${a}/`) || a.startsWith(`${b}/`);
}
