import { mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { measureDiskUsage } from '../../files/disk-usage.js';
import { describeFailure, runGit } from '../../git/git.js';
import { pathExists } from '../../files/path-exists.js';
import type { Repository } from '../../git/repository.js';
import { checkSharedLayers, linkSharedLayers } from '../../shared-layers.js';
import { checkWorkspaceId, resolveBranch, workspaceBranch } from '../../workspace.js';
import type { CreateWorkspaceOptions, KeepWorkspaceResult, RemoveWorkspaceOptions, RemoveWorkspaceResult, Workspace } from '../../workspace.js';
import { deleteWorkspaceBranch } from '../../workspace-branch.js';
import type { FoundWorkspaces, WorkspaceProvider } from '../../workspace-provider.js';
import { findWorktreeAdminDir, readWorktreeMethod } from '../../git/worktree-admin.js';
import { withWorktreeAdminLock } from '../../git/worktree-admin-lock.js';
import { errorMessage } from '../../../errors/error-message.js';

/**
 * Workspaces as `git worktree add -b colony/<id> <parentDir>/<id> <main commit>`: a full
 * checkout per workspace sharing the repository's object store. Works wherever git does; the
 * fallback when overlay mounts are not available.
 */
export function createWorktreeProvider(repo: Repository): WorkspaceProvider {
  /** The shared layers linked into each workspace of this process, whose files are not the workspace's own. */
  const layersOf = new Map<string, readonly string[]>();
  return {
    method: 'worktree',
    prepare: async () => undefined,
    async create(options) {
      const workspace = await createWorktreeWorkspace(repo, options);
      if (options.sharedLayers !== undefined && options.sharedLayers.length > 0) layersOf.set(workspace.id, options.sharedLayers);
      return workspace;
    },
    async remove(workspace, options) {
      const result = await withWorktreeAdminLock(repo, () => removeWorktreeAndBranch(repo, workspace, options));
      if (!(await pathExists(workspace.path))) layersOf.delete(workspace.id);
      return result;
    },
    keep: (workspace, reason) => lockWorktree(repo, workspace, reason),
    find: (parentDir) => findWorktrees(repo, parentDir),
    diskUsage: (workspaces) =>
      measureDiskUsage(
        workspaces.map((workspace) => workspace.path),
        { alreadyCounted: [...new Set(workspaces.flatMap((workspace) => layersOf.get(workspace.id) ?? []))] },
      ),
    estimateFreshBytes: () => estimateCheckoutBytes(repo),
    prune: async () => [],
    close: async () => [],
  };
}

/** Filesystems allocate whole blocks; 4 KiB is what ext4, XFS and APFS use by default. */
const BLOCK_BYTES = 4096;

/** The disk a checkout of main takes: every file and directory rounded up to whole blocks. */
async function estimateCheckoutBytes(repo: Repository): Promise<number> {
  const result = await runGit(repo.root, ['ls-tree', '-r', '-t', '-l', '-z', `refs/heads/${repo.mainBranch}`]);
  if (result.code !== 0) return 0;
  let total = BLOCK_BYTES;
  for (const entry of result.stdout.split('\0')) {
    // "<mode> <type> <object> <size>\t<path>"; size is "-" for trees.
    const size = entry.split('\t', 1)[0]?.split(/ +/)[3];
    if (size === undefined) continue;
    total += size === '-' ? BLOCK_BYTES : Math.ceil(Number(size) / BLOCK_BYTES) * BLOCK_BYTES;
  }
  return total;
}

async function createWorktreeWorkspace(repo: Repository, options: CreateWorkspaceOptions): Promise<Workspace> {
  const { id } = options;
  checkWorkspaceId(id);
  const path = resolve(options.parentDir, id);
  const branch = workspaceBranch(id);
  if (await pathExists(path)) throw new Error(`Cannot create workspace ${id}: ${path} already exists.`);
  await mkdir(resolve(options.parentDir), { recursive: true });
  // The commit, not the branch name: main may move meanwhile, and baseCommit must be
  // exactly what was checked out.
  const baseCommit = await resolveBranch(repo, repo.mainBranch);
  const layers = [...(options.sharedLayers ?? []), ...((await options.layersFor?.(baseCommit)) ?? [])];
  const layerProblem = await checkSharedLayers(layers);
  if (layerProblem !== null) throw new Error(`Cannot create workspace ${id}: ${layerProblem}`);
  const args = ['worktree', 'add', '--quiet', '-b', branch, path, baseCommit];
  const result = await withWorktreeAdminLock(repo, () => runGit(repo.root, args));
  if (result.code !== 0) throw new Error(`Cannot create workspace ${id}: ${describeFailure(args, result)}`);
  // Found now, before any agent works in it, from git's own records: from here on colony's git
  // calls name this directory and never read the worktree's `.git` file again.
  const gitDir = await findWorktreeAdminDir(repo, path, id);
  const workspace: Workspace = { id, path, branch, baseCommit, method: 'worktree', gitDir: gitDir ?? '' };
  const undo = () => withWorktreeAdminLock(repo, () => removeWorktreeAndBranch(repo, workspace, { deleteBranch: true, forceDeleteBranch: true }));
  if (gitDir === null) {
    await undo();
    throw new Error(`Cannot create workspace ${id}: git made the worktree at ${path}, but no record under ${repo.gitDir}/worktrees names it.`);
  }
  try {
    await linkSharedLayers(layers, path);
  } catch (error) {
    await undo();
    throw new Error(`Cannot create workspace ${id}: linking the shared layers failed: ${errorMessage(error)}`, { cause: error });
  }
  return workspace;
}

/**
 * `git worktree remove --force`, never a plain delete: when git refuses (the worktree's `.git`
 * is missing or was replaced, so git cannot vouch for what it holds), the directory and the
 * branch are both kept.
 */
async function removeWorktreeAndBranch(repo: Repository, workspace: Workspace, options: RemoveWorkspaceOptions): Promise<RemoveWorkspaceResult> {
  if (await pathExists(workspace.path)) {
    const args = ['worktree', 'remove', '--force', '--force', workspace.path];
    const removed = await runGit(repo.root, args);
    if (removed.code !== 0) {
      return {
        removed: false,
        reason: `The workspace at ${workspace.path} was kept, with its branch ${workspace.branch}: git would not remove it, so what it holds is unknown. ${describeFailure(args, removed)}. Look at what it holds, then delete it by hand.`,
      };
    }
  } else {
    // The directory is gone already; only git's record of the worktree is left to drop.
    const args = ['worktree', 'prune'];
    const pruned = await runGit(repo.root, args);
    if (pruned.code !== 0) {
      return { removed: false, reason: `git's record of the workspace ${workspace.id} and its branch ${workspace.branch} were kept: ${describeFailure(args, pruned)}` };
    }
  }
  if (!options.deleteBranch) return { removed: true };
  return deleteWorkspaceBranch(repo, workspace, options.forceDeleteBranch === true);
}

/** `git worktree lock`: git then never prunes the record (its index and HEAD), even if the folder goes missing for a while. */
function lockWorktree(repo: Repository, workspace: Workspace, reason: string): Promise<KeepWorkspaceResult> {
  return withWorktreeAdminLock(repo, async () => {
    const args = ['worktree', 'lock', '--reason', reason.replace(/\s+/g, ' ').slice(0, 500), workspace.path];
    const result = await runGit(repo.root, args);
    if (result.code === 0 || /already locked/.test(result.stderr)) return { locked: true };
    return { locked: false, error: describeFailure(args, result) };
  });
}

/** One entry of `git worktree list --porcelain -z`. */
interface ListedWorktree {
  readonly path: string;
  readonly head: string | null;
}

/** Parses `git worktree list --porcelain -z`: attribute lines separated by NUL, entries by an empty one. */
export function parseWorktreeList(output: string): ListedWorktree[] {
  const entries: ListedWorktree[] = [];
  let path: string | null = null;
  let head: string | null = null;
  for (const field of output.split('\0')) {
    if (field === '') {
      if (path !== null) entries.push({ path, head });
      path = null;
      head = null;
    } else if (field.startsWith('worktree ')) {
      path = field.slice('worktree '.length);
    } else if (field.startsWith('HEAD ')) {
      head = field.slice('HEAD '.length);
    }
  }
  if (path !== null) entries.push({ path, head });
  return entries;
}

async function findWorktrees(repo: Repository, parentDir: string): Promise<FoundWorkspaces> {
  const args = ['worktree', 'list', '--porcelain', '-z'];
  const listed = await runGit(repo.root, args);
  if (listed.code !== 0) return { workspaces: [], problems: [`Could not list the worktrees: ${describeFailure(args, listed)}`] };
  const parent = await realpath(parentDir).catch(() => resolve(parentDir));
  const workspaces: Workspace[] = [];
  const problems: string[] = [];
  for (const entry of parseWorktreeList(listed.stdout)) {
    if (dirname(entry.path) !== parent && dirname(entry.path) !== resolve(parentDir)) continue;
    const id = basename(entry.path);
    try {
      checkWorkspaceId(id);
    } catch {
      problems.push(`The worktree at ${entry.path} is not named like a workspace; left alone.`);
      continue;
    }
    // Made by another method (an overlay): git lists it too, but it is not this method's to remove.
    if ((await readWorktreeMethod(repo, id)) !== null) continue;
    const gitDir = await findWorktreeAdminDir(repo, entry.path, id);
    if (gitDir === null) {
      problems.push(`The worktree at ${entry.path} has no record under ${repo.gitDir}/worktrees that names it; left alone.`);
      continue;
    }
    const baseCommit = await mergeBaseWithMain(repo, entry.head);
    workspaces.push({ id, path: entry.path, branch: workspaceBranch(id), baseCommit, method: 'worktree', gitDir });
  }
  return { workspaces, problems };
}

/** Where a found workspace's HEAD left main: the best account of what it was made from. */
async function mergeBaseWithMain(repo: Repository, head: string | null): Promise<string> {
  if (head === null) return '';
  const result = await runGit(repo.root, ['merge-base', `refs/heads/${repo.mainBranch}`, head]);
  return result.code === 0 ? result.stdout.trim() : head;
}
