import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorCode } from './file-errors.js';
import { errorMessage } from '../errors/error-message.js';

/** The directory a set of tools is bound to and confined to, as an absolute path. */
export type WorkspaceRoot = string;

/** A path a tool may touch, checked against its workspace. */
export interface WorkspacePath {
  /** The path as shown back to the model: relative to the root, `.` for the root itself. */
  readonly display: string;
  /** Where to operate: absolute, symlinks resolved (for a new file, those of its nearest existing ancestor). */
  readonly real: string;
  /** The workspace root with its own symlinks resolved. */
  readonly realRoot: string;
}

export type WorkspacePathResult =
  | { readonly ok: true; readonly path: WorkspacePath }
  | { readonly ok: false; readonly error: string };

// Linux gives up after 40 links in one lookup; follow its lead for links we resolve by hand.
const MAX_SYMLINK_HOPS = 40;
// Linux's PATH_MAX and NAME_MAX: longer paths or names fail in every system call anyway.
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;
const SHOWN_PATH_CHARACTERS = 200;

class SymlinkLoopError extends Error {}

/**
 * Checks `requested` against the workspace and resolves where it really points. Refused: a path
 * that leads out with `..`, an absolute path outside, a path whose symlinks (a parent directory,
 * the final component, or a dangling link a write would follow) end outside, and anything in
 * `.git`. Resolution goes through the nearest existing ancestor, so a new nested file is checked
 * before its directories are made. Never throws.
 */
export async function resolveWorkspacePath(workspace: WorkspaceRoot, requested: string): Promise<WorkspacePathResult> {
  if (requested === '') {
    return { ok: false, error: 'path is empty; give a path relative to the workspace root, such as "src/index.ts" or "."' };
  }
  if (requested.includes('\u0000')) return { ok: false, error: `path contains a NUL byte: ${JSON.stringify(shown(requested))}` };
  if (Buffer.byteLength(requested) > MAX_PATH_BYTES || requested.split(/[\\/]/).some((name) => Buffer.byteLength(name) > MAX_NAME_BYTES)) {
    return { ok: false, error: tooLongError(requested) };
  }
  const root = resolve(workspace);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    return { ok: false, error: `the workspace directory does not exist: ${root}` };
  }
  const lexical = isAbsolute(requested) ? resolve(requested) : resolve(root, requested);
  const inside = relativeInside(root, lexical) ?? relativeInside(realRoot, lexical);
  if (inside === undefined) return { ok: false, error: escapeError(requested) };
  if (isInGitDirectory(inside)) return { ok: false, error: gitError(requested) };

  let real: string;
  try {
    real = await resolveThroughSymlinks(join(realRoot, inside), 0);
  } catch (error) {
    if (error instanceof SymlinkLoopError || errorCode(error) === 'ELOOP') {
      return { ok: false, error: `path has a loop of symbolic links: ${shown(requested)}` };
    }
    if (errorCode(error) === 'ENAMETOOLONG') return { ok: false, error: tooLongError(requested) };
    return { ok: false, error: `cannot resolve ${shown(requested)}: ${errorMessage(error)}` };
  }
  const realInside = relativeInside(realRoot, real);
  if (realInside === undefined) return { ok: false, error: escapeError(requested) };
  if (isInGitDirectory(realInside)) return { ok: false, error: gitError(requested) };
  return { ok: true, path: { display: inside, real, realRoot } };
}

function escapeError(requested: string): string {
  return `path escapes the workspace: ${shown(requested)}; use a path inside the workspace, relative to its root`;
}

function gitError(requested: string): string {
  return `path is inside .git: ${shown(requested)}; git's own files are off limits to file tools, use git commands through run_command instead`;
}

function tooLongError(requested: string): string {
  return `path is too long (${Buffer.byteLength(requested)} bytes): ${shown(requested)}; a name in a path can be at most ${MAX_NAME_BYTES} bytes and a whole path ${MAX_PATH_BYTES}`;
}

/** A path as quoted back in an error: whole when short, its start and length when not, so an error never floods the conversation. */
function shown(requested: string): string {
  return requested.length <= SHOWN_PATH_CHARACTERS ? requested : `${requested.slice(0, SHOWN_PATH_CHARACTERS)}… (${requested.length} characters)`;
}

/** `target` relative to `base` (`.` for base itself), or undefined when it is not inside. */
function relativeInside(base: string, target: string): string | undefined {
  const path = relative(base, target);
  if (path === '') return '.';
  if (path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) return undefined;
  return path;
}

/** Any component named `.git`, in any case: on a case-insensitive file system `.GIT` is the same directory. */
function isInGitDirectory(relativePath: string): boolean {
  return relativePath.split(sep).some((name) => name.toLowerCase() === '.git');
}

/**
 * The real path of `path` even when it does not exist yet: the existing ancestor is resolved by
 * realpath, and a dangling symlink on the way is followed by hand, because writing through it
 * would create its target.
 */
async function resolveThroughSymlinks(path: string, hops: number): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await resolveThroughSymlinks(parent, hops);
  const candidate = join(realParent, basename(path));
  const target = await symlinkTarget(candidate);
  if (target === null) return candidate;
  if (hops >= MAX_SYMLINK_HOPS) throw new SymlinkLoopError();
  return resolveThroughSymlinks(resolve(realParent, target), hops + 1);
}

async function symlinkTarget(path: string): Promise<string | null> {
  try {
    const info = await lstat(path);
    return info.isSymbolicLink() ? await readlink(path) : null;
  } catch {
    return null;
  }
}
