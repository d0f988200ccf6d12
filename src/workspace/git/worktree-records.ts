import { readdir, readFile, realpath } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pathExists } from '../files/path-exists.js';
import type { Repository } from './repository.js';
import { removeWorktreeAdmin } from './worktree-admin.js';
import { withWorktreeAdminLock } from './worktree-admin-lock.js';
import { errorMessage } from '../../errors/error-message.js';

/** One linked worktree as git records it under `<git dir>/worktrees/<name>`. */
export interface WorktreeRecord {
  /** The record's folder name, which `git worktree` commands and colony's workspaces know it by. */
  readonly name: string;
  /** The worktree's directory, as the record names it. */
  readonly path: string;
  /** The branch its HEAD is on (`colony/<id>` for a workspace), or null for a detached one (a view). */
  readonly branch: string | null;
  /** Marked kept (`git worktree lock`, or colony keeping a workspace it could not read): nothing prunes it. */
  readonly locked: boolean;
}

/**
 * The worktrees git records whose directory is `dir` or lies under it, read from the
 * repository's own records, not from the worktrees (which may be gone or unmounted). Paths are
 * compared both as given and through `dir`'s real path, as records hold either. Never throws:
 * a record that cannot be read is not listed.
 */
export async function worktreeRecordsUnder(repo: Repository, dir: string): Promise<WorktreeRecord[]> {
  const prefixes = [...new Set([resolve(dir), await realpath(dir).catch(() => resolve(dir))])];
  const inside = (path: string) => prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}${sep}`));
  const adminRoot = join(repo.gitDir, 'worktrees');
  const names = await readdir(adminRoot).catch(() => [] as string[]);
  const records: WorktreeRecord[] = [];
  for (const name of names) {
    const adminDir = join(adminRoot, name);
    const named = (await readFile(join(adminDir, 'gitdir'), 'utf8').catch(() => '')).trim();
    if (named === '') continue;
    const path = dirname(resolve(adminDir, named));
    if (!inside(path)) continue;
    const head = (await readFile(join(adminDir, 'HEAD'), 'utf8').catch(() => '')).trim();
    const branch = head.startsWith('ref: refs/heads/') ? head.slice('ref: refs/heads/'.length) : null;
    records.push({ name, path, branch, locked: await pathExists(join(adminDir, 'locked')) });
  }
  return records;
}

/**
 * Deletes git's records of these worktrees and nothing of their files, which stay where they
 * are (for a state directory moved aside whole, say). Returns the paths whose records went.
 */
export async function dropWorktreeRecords(repo: Repository, records: readonly WorktreeRecord[]): Promise<{ readonly dropped: string[]; readonly problems: string[] }> {
  const dropped: string[] = [];
  const problems: string[] = [];
  for (const record of records) {
    try {
      await withWorktreeAdminLock(repo, () => removeWorktreeAdmin(repo, record.name));
      dropped.push(record.path);
    } catch (error) {
      problems.push(`git's record of the worktree ${record.path} (${join(repo.gitDir, 'worktrees', record.name)}) could not be deleted: ${errorMessage(error)}`);
    }
  }
  return { dropped, problems };
}
