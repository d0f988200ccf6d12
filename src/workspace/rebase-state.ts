import { readFile, rm, writeFile } from 'node:fs/promises';
import { describeFailure, runGit, splitNul } from './git.js';
import { isDirectory } from './path-exists.js';

/** A rebase stopped in a worktree, waiting for its conflicts to be resolved. */
export interface RebaseInProgress {
  /** The commit being rebased onto: the trunk commit the conflicts are against. */
  readonly onto: string;
}

/**
 * Where colony remembers which files a stopped rebase left conflicted. git forgets it as
 * soon as the files are staged, and a resolution that was staged must still be checked for
 * leftover markers. The file lives in the worktree's private git directory, so it is never
 * committed and goes away with the worktree.
 */
const CONFLICT_RECORD = 'colony-conflicted-files';

async function gitPath(worktree: string, name: string): Promise<string> {
  const args = ['rev-parse', '--path-format=absolute', '--git-path', name];
  const result = await runGit(worktree, args);
  const path = result.stdout.trim();
  if (result.code !== 0 || path === '') throw new Error(describeFailure(args, result));
  return path;
}

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** The rebase stopped in `worktree`, or null when none is in progress. */
export async function readRebaseState(worktree: string): Promise<RebaseInProgress | null> {
  for (const name of ['rebase-merge', 'rebase-apply']) {
    const directory = await gitPath(worktree, name);
    if (!(await isDirectory(directory))) continue;
    const onto = (await readIfPresent(`${directory}/onto`))?.trim() ?? '';
    return { onto };
  }
  return null;
}

/** Paths (relative to the worktree root) git currently holds as unmerged. */
export async function unmergedFiles(worktree: string): Promise<string[]> {
  const args = ['diff', '--name-only', '--diff-filter=U', '-z'];
  const result = await runGit(worktree, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return [...new Set(splitNul(result.stdout))];
}

export async function recordConflictedFiles(worktree: string, files: readonly string[]): Promise<void> {
  await writeFile(await gitPath(worktree, CONFLICT_RECORD), files.map((file) => `${file}\0`).join(''));
}

export async function readConflictedFiles(worktree: string): Promise<string[]> {
  return splitNul((await readIfPresent(await gitPath(worktree, CONFLICT_RECORD))) ?? '');
}

export async function forgetConflictedFiles(worktree: string): Promise<void> {
  await rm(await gitPath(worktree, CONFLICT_RECORD), { force: true });
}
