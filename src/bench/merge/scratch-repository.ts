import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import type { RunGitOptions } from '../../workspace/git/git.js';
import { openRepository } from '../../workspace/git/repository.js';
import type { Repository } from '../../workspace/git/repository.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import type { Workspace } from '../../workspace/workspace.js';
import { SHARED_FILE, initialSharedText } from './planned-change.js';

/** A throwaway repository in a temporary directory, with one workspace per merger. */
export interface ScratchRepository {
  /** The temporary directory holding the repository, the workspaces and any scratch files. */
  readonly base: string;
  readonly repo: Repository;
  readonly workspaces: readonly Workspace[];
  /** Deletes the whole temporary directory. */
  remove(): Promise<void>;
}

export interface ScratchRepositoryOptions {
  /** How many files the first commit holds besides the shared file, in nested folders. */
  readonly files: number;
  readonly mergers: number;
}

/** Runs git and returns its output; a failure here means the bench cannot set up at all. */
export async function gitOrThrow(cwd: string, args: readonly string[], options?: RunGitOptions): Promise<string> {
  const result = await runGit(cwd, args, options);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return result.stdout;
}

/** Where file `index` of the first commit goes: 100 folders of 10 folders of 10 files, so git has a real tree to walk. */
function treePath(index: number): string {
  return `src/part${Math.floor(index / 100)}/group${Math.floor(index / 10) % 10}/file${index % 10}.txt`;
}

/**
 * Makes the repository: `files` files plus the shared file in one commit on `main`, then a
 * workspace (a git worktree) per merger. Automatic garbage collection is off in this
 * repository, so a background repack does not land in one run and not in another.
 * Throws when git cannot make it, after deleting what it made.
 */
export async function createScratchRepository(options: ScratchRepositoryOptions): Promise<ScratchRepository> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'colony-bench-merge-')));
  const remove = (): Promise<void> => rm(base, { recursive: true, force: true });
  try {
    const root = join(base, 'repo');
    await mkdir(root);
    await gitOrThrow(root, ['init', '--quiet', '--initial-branch=main']);
    await gitOrThrow(root, ['config', 'gc.auto', '0']);
    for (let folder = 0; folder * 10 < options.files; folder += 1) {
      const indexes = Array.from({ length: Math.min(10, options.files - folder * 10) }, (_, offset) => folder * 10 + offset);
      await mkdir(dirname(join(root, treePath(folder * 10))), { recursive: true });
      await Promise.all(indexes.map((index) => writeFile(join(root, treePath(index)), `file ${index}\n${'content line\n'.repeat(4)}`)));
    }
    await mkdir(join(root, dirname(SHARED_FILE)), { recursive: true });
    await writeFile(join(root, SHARED_FILE), initialSharedText());
    await gitOrThrow(root, ['add', '--all']);
    await gitOrThrow(root, ['commit', '--quiet', '-m', 'Start']);
    const opened = await openRepository(root);
    if (!opened.ok) throw new Error(opened.error);
    const workspaces: Workspace[] = [];
    for (let merger = 0; merger < options.mergers; merger += 1) {
      workspaces.push(await createWorktreeProvider(opened.repo).create({ id: `m${merger}`, parentDir: join(base, 'workspaces') }));
    }
    return { base, repo: opened.repo, workspaces, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
