import { randomBytes } from 'node:crypto';
import { copyFile, link, lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathExists } from '../files/path-exists.js';
import type { Repository } from './repository.js';

/**
 * Where git keeps the record of a linked worktree named `id`: its HEAD, index, and the files
 * that tie it to the worktree's directory.
 */
export function worktreeAdminDir(repo: Repository, id: string): string {
  return join(repo.gitDir, 'worktrees', id);
}

/** The real path of `path`, or `path` itself resolved when it cannot be looked at. */
async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/**
 * The record git keeps for the worktree at `worktreePath`: the `worktrees/<name>` directory
 * whose `gitdir` file names `<worktreePath>/.git`. `name` is tried first (git names the record
 * after the directory unless that name is taken). Read from the repository's git directory
 * alone, never from the worktree, whose `.git` file is the agent's to rewrite. Null when no
 * record names it.
 */
export async function findWorktreeAdminDir(repo: Repository, worktreePath: string, name: string): Promise<string | null> {
  const wanted = await realOrResolved(worktreePath);
  const names = await readdir(join(repo.gitDir, 'worktrees')).catch(() => [] as string[]);
  for (const candidate of [name, ...names.filter((other) => other !== name)]) {
    const adminDir = join(repo.gitDir, 'worktrees', candidate);
    const named = (await readFile(join(adminDir, 'gitdir'), 'utf8').catch(() => '')).trim();
    if (named === '' || !named.endsWith('.git')) continue;
    if ((await realOrResolved(dirname(named))) === wanted) return adminDir;
  }
  return null;
}

/**
 * Null when the `.git` of the worktree at `worktreePath` is still the file git wrote, naming
 * `gitDir`; otherwise what happened to it, and how to put it back. An agent can delete or
 * rewrite it (it is inside the workspace); colony's git calls never follow it, so this only
 * tells whether the agent's own git commands still reach the workspace's repository.
 */
export async function checkWorktreeGitFile(worktreePath: string, gitDir: string): Promise<string | null> {
  const dotGit = join(worktreePath, '.git');
  const restore = `Put it back with \`printf 'gitdir: %s\\n' ${gitDir} > .git\` in the workspace root.`;
  let text: string;
  try {
    const info = await lstat(dotGit);
    if (info.isDirectory()) return `The workspace's .git at ${dotGit} was replaced by a directory, another repository than the workspace's; it must be the file naming the workspace's git directory ${gitDir}. Move the directory away, then: ${restore}`;
    if (!info.isFile()) return `The workspace's .git at ${dotGit} is not a regular file (a symbolic link?); it must be the file naming the workspace's git directory ${gitDir}. ${restore}`;
    text = await readFile(dotGit, 'utf8');
  } catch {
    return `The workspace's .git file at ${dotGit} is missing. ${restore}`;
  }
  const match = /^gitdir: (.+?)\r?$/m.exec(text);
  const named = match?.[1];
  if (named === undefined) return `The workspace's .git file at ${dotGit} does not name a git directory. ${restore}`;
  const namedPath = isAbsolute(named) ? named : resolve(worktreePath, named);
  if ((await realOrResolved(namedPath)) !== (await realOrResolved(gitDir))) {
    return `The workspace's .git file at ${dotGit} names ${named}, not the workspace's git directory ${gitDir}. ${restore}`;
  }
  return null;
}

/**
 * A file in a worktree record naming the method that made it, when that is not `git worktree
 * add`: git ignores it, and colony's worktree method leaves such records to their own method.
 */
const METHOD_FILE = 'colony-workspace-method';

/** The method named in the record of worktree `id`, or null for a plain `git worktree add` one. */
export async function readWorktreeMethod(repo: Repository, id: string): Promise<string | null> {
  try {
    return (await readFile(join(worktreeAdminDir(repo, id), METHOD_FILE), 'utf8')).trim();
  } catch {
    return null;
  }
}

/** Where records are put together before they appear, and taken apart after they vanish. */
function stagingDir(repo: Repository): string {
  return join(repo.gitDir, 'colony-worktree-staging');
}

export interface WorktreeAdminOptions {
  readonly id: string;
  /** The worktree's directory; its `.git` file must name this record. */
  readonly worktreePath: string;
  /** The branch HEAD names, e.g. `colony/<id>`. */
  readonly branch: string;
  /**
   * An index matching the branch's commit. It is hard-linked, not copied, when it can be: git
   * only ever replaces an index by renaming a new file over it, never writes one in place, so
   * the source is never changed by what happens in the worktree.
   */
  readonly indexSource: string;
  /** The method that made the worktree, recorded for whoever sweeps it later. */
  readonly method: string;
}

/**
 * Writes the record git keeps for a linked worktree, exactly as `git worktree add` would
 * (HEAD, commondir, gitdir, index), without checking anything out. The record is assembled
 * aside and renamed into `worktrees/<id>` in one step: a git listing worktrees meanwhile sees
 * it whole or not at all, never a half-written one (git stops on an empty `commondir`).
 * Throws when a record with this id exists or the disk refuses.
 */
export async function writeWorktreeAdmin(repo: Repository, options: WorktreeAdminOptions): Promise<string> {
  const target = worktreeAdminDir(repo, options.id);
  if (await pathExists(target)) throw new Error(`git already has a worktree record named ${options.id} (${target})`);
  const staging = join(stagingDir(repo), `${options.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    await writeFile(join(staging, 'HEAD'), `ref: refs/heads/${options.branch}\n`);
    await writeFile(join(staging, 'commondir'), '../..\n');
    await writeFile(join(staging, 'gitdir'), `${join(options.worktreePath, '.git')}\n`);
    await writeFile(join(staging, METHOD_FILE), `${options.method}\n`);
    try {
      await link(options.indexSource, join(staging, 'index'));
    } catch {
      // Another filesystem (the state directory was put elsewhere): a copy is as good, only bigger.
      await copyFile(options.indexSource, join(staging, 'index'));
    }
    await mkdir(join(repo.gitDir, 'worktrees'), { recursive: true });
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (error instanceof Error && 'code' in error && (error.code === 'ENOTEMPTY' || error.code === 'EEXIST')) {
      throw new Error(`git already has a worktree record named ${options.id} (${target})`, { cause: error });
    }
    throw error;
  }
  return target;
}

/**
 * Deletes git's record of the worktree `id`: moved aside in one step first, so a git reading
 * the records meanwhile never meets a half-deleted one. A record that is gone already is fine.
 */
export async function removeWorktreeAdmin(repo: Repository, id: string): Promise<void> {
  const target = worktreeAdminDir(repo, id);
  const aside = join(stagingDir(repo), `removed-${id}-${randomBytes(4).toString('hex')}`);
  await mkdir(stagingDir(repo), { recursive: true });
  try {
    await rename(target, aside);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return;
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

/** Marks the record kept, as `git worktree lock --reason` does: `git worktree prune` leaves it alone. */
export async function lockWorktreeAdmin(repo: Repository, id: string, reason: string): Promise<void> {
  await writeFile(join(worktreeAdminDir(repo, id), 'locked'), reason.replace(/\s+/g, ' ').slice(0, 500));
}
