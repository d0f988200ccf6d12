import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFailure, runGit, splitNul } from './git.js';
import type { GitWorkTree } from './git.js';
import { isDirectory } from '../files/path-exists.js';

/** A rebase stopped in a worktree, waiting for its conflicts to be resolved. */
export interface RebaseInProgress {
  /** The commit being rebased onto: main commit the conflicts are against. */
  readonly onto: string;
}

/**
 * Where colony remembers which files a stopped rebase left conflicted. git forgets it as
 * soon as the files are staged, and a resolution that was staged must still be checked for
 * leftover markers. The file lives in the worktree's private git directory, so it is never
 * committed and goes away with the worktree.
 */
const CONFLICT_RECORD = 'colony-conflicted-files';

/** A file of the worktree's own git directory (rebase state is kept per worktree). */
function gitPath(worktree: GitWorkTree, name: string): string {
  return join(worktree.gitDir, name);
}

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** The rebase stopped in `worktree`, or null when none is in progress. */
export async function readRebaseState(worktree: GitWorkTree): Promise<RebaseInProgress | null> {
  for (const name of ['rebase-merge', 'rebase-apply']) {
    const directory = gitPath(worktree, name);
    if (!(await isDirectory(directory))) continue;
    const onto = (await readIfPresent(`${directory}/onto`))?.trim() ?? '';
    return { onto };
  }
  return null;
}

/** Paths (relative to the worktree root) git currently holds as unmerged. */
export async function unmergedFiles(worktree: GitWorkTree): Promise<string[]> {
  // No external diff, no text conversion, no look inside submodules: nothing the repository's
  // configuration names runs, and only the index's unmerged entries matter here.
  const args = ['diff', '--no-ext-diff', '--no-textconv', '--ignore-submodules=dirty', '--name-only', '--diff-filter=U', '-z'];
  const result = await runGit(worktree, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return [...new Set(splitNul(result.stdout))];
}

export async function recordConflictedFiles(worktree: GitWorkTree, files: readonly string[]): Promise<void> {
  await writeFile(gitPath(worktree, CONFLICT_RECORD), files.map((file) => `${file}\0`).join(''));
}

export async function readConflictedFiles(worktree: GitWorkTree): Promise<string[]> {
  return splitNul((await readIfPresent(gitPath(worktree, CONFLICT_RECORD))) ?? '');
}

export async function forgetConflictedFiles(worktree: GitWorkTree): Promise<void> {
  await rm(gitPath(worktree, CONFLICT_RECORD), { force: true });
}

/** One index stage of a conflicted path (1 base, 2 main side of a rebase, 3 the workspace side), or null when absent. */
export async function conflictStage(worktree: GitWorkTree, number: 1 | 2 | 3, path: string): Promise<string | null> {
  // The blob as stored: `cat-file` applies no filter or text conversion the configuration names.
  const result = await runGit(worktree, ['cat-file', 'blob', `:${number}:${path}`]);
  return result.code === 0 ? result.stdout : null;
}

/** Conflicted files of a stopped rebase that colony settled and staged, and those it left for the agent. */
export interface ConflictResolution {
  readonly resolved: string[];
  readonly remaining: string[];
  /** Why files colony settles when it can were left among `remaining`; absent when none were. */
  readonly unsettled?: string;
}

/** Settles what it can of a stopped rebase's conflicted `files` in `worktree`; never throws for what git or the disk do. */
export type ConflictSettler = (worktree: GitWorkTree, files: readonly string[]) => Promise<ConflictResolution>;
