import { join } from 'node:path';
import { measureDiskUsage } from '../../workspace/files/disk-usage.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { Workspace, WorkspaceMethod } from '../../workspace/workspace.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';

/** What making workspaces costs, as `colony bench workspaces` prints it. */
export interface WorkspaceMeasurement {
  readonly count: number;
  readonly method: WorkspaceMethod;
  /** Wall time of one `create`, averaged over `count` made one after another. */
  readonly msPerWorkspace: number;
  /** Disk each workspace adds (its files, upper layer, git's record and index), averaged. */
  readonly bytesPerWorkspace: number;
  /** Made once and shared by all (overlay: the base checkout), not included above. */
  readonly sharedBytes: number;
  readonly sharedMs: number;
  /** Wall time of the first `git status` in a fresh workspace, averaged over up to five. */
  readonly firstStatusMs: number;
}

export interface MeasureOptions {
  readonly count: number;
  /** Where the workspaces are made; nothing else may be in it. */
  readonly parentDir: string;
  /** The provider's own storage (overlay bases and layers), if any, so its disk is counted. */
  readonly storageDir?: string;
  /** Runs `git status` in a workspace, for the first-status figure. */
  readonly status: (workspace: Workspace) => Promise<void>;
  readonly idPrefix?: string;
}

/**
 * Makes `count` workspaces one after another with `provider`, measures the time and the real
 * allocated disk (every file once, hard links included, git's records and indexes included),
 * then removes them all with their branches and closes the provider. The shared part (made by
 * `prepare`) is measured apart, so `bytesPerWorkspace` is what one more workspace costs.
 */
export async function measureWorkspaces(repo: Repository, provider: WorkspaceProvider, options: MeasureOptions): Promise<WorkspaceMeasurement> {
  const roots = [options.parentDir, join(repo.gitDir, 'worktrees'), ...(options.storageDir === undefined ? [] : [options.storageDir])];
  const empty = await measureDiskUsage(roots);
  const preparing = performance.now();
  await provider.prepare();
  const sharedMs = performance.now() - preparing;
  const prepared = await measureDiskUsage(roots);
  const workspaces: Workspace[] = [];
  try {
    const creating = performance.now();
    for (let index = 0; index < options.count; index += 1) {
      workspaces.push(await provider.create({ id: `${options.idPrefix ?? 'bench'}-${index}`, parentDir: options.parentDir }));
    }
    const msPerWorkspace = (performance.now() - creating) / options.count;
    const made = await measureDiskUsage(roots);
    let statusMs = 0;
    const sampled = workspaces.slice(0, 5);
    for (const workspace of sampled) {
      const started = performance.now();
      await options.status(workspace);
      statusMs += performance.now() - started;
    }
    return {
      count: options.count,
      method: provider.method,
      msPerWorkspace,
      bytesPerWorkspace: (made - prepared) / options.count,
      sharedBytes: prepared - empty,
      sharedMs,
      firstStatusMs: statusMs / Math.max(1, sampled.length),
    };
  } finally {
    for (const workspace of workspaces) await provider.remove(workspace, { deleteBranch: true, forceDeleteBranch: true });
    await provider.close();
  }
}
