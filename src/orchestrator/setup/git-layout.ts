import { readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Where a checkout's files and its repository's shared git directory are, as git itself would find them. */
export interface GitLayout {
  /** The top directory of the checkout (the main one, or a linked worktree). */
  readonly root: string;
  /** The git directory every worktree of the repository shares (`git rev-parse --git-common-dir`). */
  readonly commonDir: string;
}

/**
 * The layout of the checkout `dir` is in, found the way git finds it (without the GIT_*
 * variables, which colony's own git calls never pass on either): the nearest `.git` upwards,
 * a directory or a file saying `gitdir: <path>` (a linked worktree, a submodule), then that git
 * directory's `commondir` when it has one. Read from the files rather than by running git, so
 * it stays synchronous and cheap for callers that only want a default path; null when `dir` is
 * not an existing directory inside a checkout. Paths are real paths, as git prints them.
 */
export function findGitLayout(dir: string): GitLayout | null {
  if (statOrNull(dir)?.isDirectory() !== true) return null;
  for (let root = resolve(dir); ; root = dirname(root)) {
    const gitDir = gitDirAt(root);
    if (gitDir !== null) return { root: realpathOr(root), commonDir: realpathOr(commonDirOf(gitDir)) };
    if (dirname(root) === root) return null;
  }
}

/** The git directory `root/.git` names: itself when a directory, what it points to when a file, else null. */
function gitDirAt(root: string): string | null {
  const dotGit = join(root, '.git');
  const info = statOrNull(dotGit);
  if (info === null) return null;
  if (info.isDirectory()) return dotGit;
  const pointer = /^gitdir: *(.+?)\s*$/m.exec(readOrEmpty(dotGit));
  return pointer?.[1] === undefined ? null : resolve(root, pointer[1]);
}

/** A linked worktree's git directory names the shared one in its `commondir` file, relative to itself. */
function commonDirOf(gitDir: string): string {
  const commonDir = readOrEmpty(join(gitDir, 'commondir')).trim();
  return commonDir === '' ? gitDir : resolve(gitDir, commonDir);
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
