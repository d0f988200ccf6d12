import { posix } from 'node:path';

/**
 * Paths as planners declare them and workers touch them, and where two sets of them meet.
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
function keyOf(path: string): string {
  return path.replace(/\/+$/, '');
}

/** The proper ancestors of a key, outermost first: `src`, `src/text` for `src/text/pad.js`. */
function ancestorsOf(key: string): string[] {
  const parts = key.split('/');
  return parts.slice(1).map((_, index) => parts.slice(0, index + 1).join('/'));
}

/** One path of one owner in a PathIndex, with where it came from. */
export interface IndexedPath<Source extends string> {
  readonly owner: string;
  /** As the owner gave it (normalised), a folder with its trailing slash. */
  readonly path: string;
  readonly source: Source;
}

/**
 * The paths of many owners (tasks), indexed so that finding who meets a path costs a lookup
 * per segment of that path rather than a comparison with every path of every owner.
 */
export class PathIndex<Source extends string> {
  private readonly exact = new Map<string, IndexedPath<Source>[]>();
  private readonly under = new Map<string, IndexedPath<Source>[]>();

  add(owner: string, path: string, source: Source): void {
    const entry = { owner, path, source };
    const key = keyOf(path);
    push(this.exact, key, entry);
    for (const ancestor of ancestorsOf(key)) push(this.under, ancestor, entry);
  }

  /** Paths equal to `path` or folders above it: they cover it, so they meet at `path`. */
  atOrAbove(path: string): IndexedPath<Source>[] {
    const key = keyOf(path);
    return [...ancestorsOf(key), key].flatMap((candidate) => this.exact.get(candidate) ?? []);
  }

  /** Paths strictly below `path` (a folder): each meets it at its own, more specific, path. */
  below(path: string): IndexedPath<Source>[] {
    return this.under.get(keyOf(path)) ?? [];
  }
}

function push<Value>(map: Map<string, Value[]>, key: string, value: Value): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
