import { mkdir, readFile, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { measureDiskUsage } from '../../files/disk-usage.js';
import { describeFailure, runGit } from '../../git/git.js';
import { createBaseCheckouts, type BaseCheckout, type BaseCheckoutsOptions } from './overlay-bases.js';
import { checkOverlayPaths, mountOverlay, readOverlayMounts, unmountOverlay, type MountResult } from './overlay-mount.js';
import { OVERLAY_RECORD_FILE, readOverlayRecords, recoverOverlayWorkspace, type OverlayRecord } from './overlay-recovery.js';
import { pathExists } from '../../files/path-exists.js';
import type { Repository } from '../../git/repository.js';
import { checkSharedLayers } from '../../shared-layers.js';
import { checkWorkspaceId, resolveBranch, workspaceBranch } from '../../workspace.js';
import type { CreateWorkspaceOptions, KeepWorkspaceResult, RemoveWorkspaceOptions, RemoveWorkspaceResult, Workspace } from '../../workspace.js';
import { createBranch, deleteWorkspaceBranch } from '../../workspace-branch.js';
import type { FoundWorkspaces, WorkspaceProvider } from '../../workspace-provider.js';
import { lockWorktreeAdmin, removeWorktreeAdmin, worktreeAdminDir, writeWorktreeAdmin } from '../../git/worktree-admin.js';
import { errorMessage } from '../../../errors/error-message.js';

export interface OverlayProviderOptions extends BaseCheckoutsOptions {
  /**
   * Where the shared base checkouts (`bases/`) and each workspace's own layers (`layers/<id>/`:
   * its upper and work directories and a record of how it was mounted) live. Upper layers must
   * be on a filesystem that can hold one; `probeOverlaySupport` tells.
   */
  readonly storageDir: string;
}

/**
 * Workspaces as overlay mounts (Linux, root): one read-only checkout of a main commit, shared
 * by every workspace, as the lower layer, and per workspace an upper layer that receives only
 * what the agent changes. git's worktree record is written directly, with an index linked from
 * the base, so git sees an ordinary linked worktree whose files are all up to date.
 */
export function createOverlayProvider(repo: Repository, options: OverlayProviderOptions): WorkspaceProvider {
  const storageDir = resolve(options.storageDir);
  const layersDir = join(storageDir, 'layers');
  const bases = createBaseCheckouts(repo, join(storageDir, 'bases'), options);
  /** The base each live workspace of this process stands on, by id. */
  const standsOn = new Map<string, BaseCheckout>();
  const layerPaths = (id: string) => ({ root: join(layersDir, id), upper: join(layersDir, id, 'upper'), work: join(layersDir, id, 'work') });

  async function create(createOptions: CreateWorkspaceOptions): Promise<Workspace> {
    const { id } = createOptions;
    checkWorkspaceId(id);
    const sharedLayers = [...(createOptions.sharedLayers ?? [])];
    await mkdir(createOptions.parentDir, { recursive: true });
    // The real path: it is what /proc/self/mountinfo will name the mount by.
    const path = join(await realpath(createOptions.parentDir), id);
    const problem = (await checkSharedLayers(sharedLayers)) ?? checkOverlayPaths([path, storageDir, ...sharedLayers]);
    if (problem !== null) throw new Error(`Cannot create workspace ${id}: ${problem}`);
    if (await pathExists(path)) throw new Error(`Cannot create workspace ${id}: ${path} already exists.`);
    const layers = layerPaths(id);
    if (await pathExists(layers.root)) throw new Error(`Cannot create workspace ${id}: its layers ${layers.root} already exist.`);
    const branch = workspaceBranch(id);
    const baseCommit = await resolveBranch(repo, repo.mainBranch);
    const chosen = (await createOptions.layersFor?.(baseCommit)) ?? [];
    const chosenProblem = (await checkSharedLayers(chosen)) ?? checkOverlayPaths(chosen);
    if (chosenProblem !== null) throw new Error(`Cannot create workspace ${id}: ${chosenProblem}`);
    sharedLayers.push(...chosen);
    const base = await bases.acquire(baseCommit);
    const undo: (() => Promise<unknown>)[] = [];

    // Each step that leaves something behind registers its undo, so a failure leaves nothing.
    // The branch, git's record and the mount do not depend on each other: they are made at
    // once, which saves the wait for a process or two.
    const makeBranch = async (): Promise<string | null> => {
      const created = await createBranch(repo, branch, baseCommit);
      if (!created.ok) return created.error;
      undo.push(() => deleteWorkspaceBranch(repo, { id, path, branch, baseCommit, gitDir: worktreeAdminDir(repo, id) }, true));
      return null;
    };
    const writeRecord = async (): Promise<string | null> => {
      await writeWorktreeAdmin(repo, { id, worktreePath: path, branch, indexSource: base.index, method: 'overlay' });
      undo.push(() => removeWorktreeAdmin(repo, id));
      return null;
    };
    const mount = async (): Promise<string | null> => {
      await mkdir(layersDir, { recursive: true });
      await mkdir(layers.root);
      undo.push(() => rm(layers.root, { recursive: true, force: true }));
      await Promise.all([mkdir(layers.upper), mkdir(layers.work)]);
      const record: OverlayRecord = { id, path, branch, baseCommit, base: base.commit, sharedLayers: [...sharedLayers] };
      await Promise.all([
        writeFile(join(layers.upper, '.git'), `gitdir: ${worktreeAdminDir(repo, id)}\n`),
        writeFile(join(layers.root, OVERLAY_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`),
      ]);
      await mkdir(path);
      undo.push(() => rmdir(path));
      const mounted = await mountOverlay({ lowerDirs: [...sharedLayers, base.tree], upperDir: layers.upper, workDir: layers.work }, path);
      if (!mounted.ok) return mounted.error;
      undo.push(() => unmountOverlay(path));
      return null;
    };
    const bringForward = async (): Promise<string | null> => {
      if (base.commit === baseCommit) return null;
      // The base is older than main: a two-way merge writes only the files that differ.
      const args = ['read-tree', '-m', '-u', base.commit, baseCommit];
      const forward = await runGit({ path, gitDir: worktreeAdminDir(repo, id) }, args);
      return forward.code === 0 ? null : describeFailure(args, forward);
    };

    const settled = await Promise.allSettled([makeBranch(), writeRecord(), mount()]);
    let failure: string | null = null;
    for (const step of settled) {
      if (step.status === 'rejected') failure ??= errorMessage(step.reason);
      else failure ??= step.value;
    }
    if (failure === null) {
      try {
        failure = await bringForward();
      } catch (error) {
        failure = errorMessage(error);
      }
    }
    if (failure !== null) {
      for (const step of undo.reverse()) await step().catch(() => undefined);
      bases.release(base);
      throw new Error(`Cannot create workspace ${id}: ${failure}`);
    }
    standsOn.set(id, base);
    return { id, path, branch, baseCommit, method: 'overlay', gitDir: worktreeAdminDir(repo, id) };
  }

  /**
   * Mounts the workspace again with `to` in place of its lower layer `from` (on top of its
   * lower layers when `from` is null), its upper layer
   * (everything the agent changed) kept as it is; the record follows, so a restart mounts what
   * the workspace has now. A mount that fails puts the old layers back.
   */
  async function replaceSharedLayer(workspace: Workspace, from: string | null, to: string): Promise<MountResult> {
    const layers = layerPaths(workspace.id);
    const { records } = await readOverlayRecords(layersDir);
    const record = records.find((candidate) => candidate.id === workspace.id);
    if (record === undefined) return { ok: false, error: `the overlay workspace ${workspace.id} has no record in ${layersDir}` };
    if (from !== null && !record.sharedLayers.includes(from)) return { ok: false, error: `${from} is not a layer of the overlay workspace ${workspace.id}` };
    const problem = (await checkSharedLayers([to])) ?? checkOverlayPaths([to]);
    if (problem !== null) return { ok: false, error: problem };
    const sharedLayers = from === null ? [to, ...record.sharedLayers] : record.sharedLayers.map((layer) => (layer === from ? to : layer));
    try {
      const base = standsOn.get(workspace.id) ?? (await bases.ensure(record.base));
      const mountWith = (lowers: readonly string[]) => mountOverlay({ lowerDirs: [...lowers, base.tree], upperDir: layers.upper, workDir: layers.work }, workspace.path);
      const unmounted = await unmountOverlay(workspace.path);
      if (!unmounted.ok) return unmounted;
      const mounted = await mountWith(sharedLayers);
      if (!mounted.ok) {
        const restored = await mountWith(record.sharedLayers);
        return { ok: false, error: restored.ok ? mounted.error : `${mounted.error}; mounting the old layers again failed too: ${restored.error}` };
      }
      await writeFile(join(layers.root, OVERLAY_RECORD_FILE), `${JSON.stringify({ ...record, sharedLayers }, null, 2)}\n`);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: `cannot mount the overlay workspace ${workspace.id} again: ${errorMessage(error)}` };
    }
  }

  async function remove(workspace: Workspace, removeOptions: RemoveWorkspaceOptions): Promise<RemoveWorkspaceResult> {
    const kept = (why: string): RemoveWorkspaceResult => ({ removed: false, reason: `The workspace at ${workspace.path} was kept, with its branch ${workspace.branch}: ${why}` });
    const layers = layerPaths(workspace.id);
    const mounted = (await readOverlayMounts()).some((mount) => mount.mountPoint === workspace.path);
    if (mounted) {
      const identity = await readGitFile(join(workspace.path, '.git'));
      if (identity !== `gitdir: ${worktreeAdminDir(repo, workspace.id)}`) {
        return kept(`its .git file is missing or names another repository, so what it holds is unknown. Look at what it holds, then unmount it (umount ${workspace.path}) and delete ${layers.root} by hand.`);
      }
      const unmounted = await unmountOverlay(workspace.path);
      if (!unmounted.ok) return kept(unmounted.error);
    }
    try {
      await rm(layers.root, { recursive: true, force: true });
      await removeWorktreeAdmin(repo, workspace.id);
      if (await pathExists(workspace.path)) await rmdir(workspace.path);
    } catch (error) {
      return kept(`deleting its files failed: ${errorMessage(error)}`);
    }
    const base = standsOn.get(workspace.id);
    if (base !== undefined) {
      standsOn.delete(workspace.id);
      bases.release(base);
      // An older base nothing stands on any more goes now, not at the end of the run.
      await prune(true, base.commit);
    }
    if (!removeOptions.deleteBranch) return { removed: true };
    return deleteWorkspaceBranch(repo, workspace, removeOptions.forceDeleteBranch === true);
  }

  async function keep(workspace: Workspace, reason: string): Promise<KeepWorkspaceResult> {
    try {
      await lockWorktreeAdmin(repo, workspace.id, reason);
      return { locked: true };
    } catch (error) {
      return { locked: false, error: `could not write ${join(worktreeAdminDir(repo, workspace.id), 'locked')}: ${errorMessage(error)}` };
    }
  }

  async function find(parentDir: string): Promise<FoundWorkspaces> {
    const parent = await realpath(parentDir).catch(() => resolve(parentDir));
    const { records, problems } = await readOverlayRecords(layersDir);
    const recorded = new Set(records.map((record) => record.path));
    for (const mount of await readOverlayMounts()) {
      if (dirname(mount.mountPoint) === parent && !recorded.has(mount.mountPoint)) {
        problems.push(`An overlay is mounted at ${mount.mountPoint} without a workspace record in ${layersDir}; it was left alone.`);
      }
    }
    const workspaces: Workspace[] = [];
    for (const record of records.filter((candidate) => dirname(candidate.path) === parent)) {
      const recovered = await recoverOverlayWorkspace(repo, record, { layers: layerPaths(record.id), ensureBase: bases.ensure });
      if (recovered.ok) {
        const { id, path, branch, baseCommit } = record;
        workspaces.push({ id, path, branch, baseCommit, method: 'overlay', gitDir: worktreeAdminDir(repo, id) });
      }
      else problems.push(recovered.error);
    }
    return { workspaces, problems };
  }

  async function prune(keepNewest: boolean, only?: string): Promise<string[]> {
    // Bases that workspaces left on disk still stand on (kept ones, or ones a sweep has yet to see).
    const { records } = await readOverlayRecords(layersDir);
    return bases.prune(new Set(records.map((record) => record.base)), keepNewest, only);
  }

  return {
    method: 'overlay',
    prepare: async () => {
      const base = await bases.acquire(await resolveBranch(repo, repo.mainBranch));
      bases.release(base);
    },
    create,
    replaceSharedLayer,
    remove,
    keep,
    find,
    diskUsage: (workspaces) => measureDiskUsage(workspaces.flatMap((workspace) => [layerPaths(workspace.id).upper, layerPaths(workspace.id).work])),
    // An upper layer holding only the .git file, and an empty work directory.
    estimateFreshBytes: async () => FRESH_OVERLAY_BYTES,
    prune: () => prune(true),
    async close() {
      // A base still being made in the background would otherwise appear after the cleanup.
      await bases.settle();
      return prune(false);
    },
  };
}

const FRESH_OVERLAY_BYTES = 3 * 4096;

async function readGitFile(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return null;
  }
}
