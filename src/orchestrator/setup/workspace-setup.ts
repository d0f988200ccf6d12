import { statfs } from 'node:fs/promises';
import type { EventBody } from '../../events/event-types.js';
import { chooseWorkspaceProvider } from '../../workspace/providers/choose-workspace-provider.js';
import type { WorkspaceMethodChoice } from '../../workspace/workspace-method-choice.js';
import { createOverlayProvider } from '../../workspace/providers/overlay/overlay-provider.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import type { RunLock } from './run-lock.js';
import { overlayStorageDirOf, workspacesDirOf } from './state-directory.js';
import { createWorkspaceQuota, type WorkspaceQuota } from './workspace-quota.js';
import { sweepWorkspaces } from './workspace-sweep.js';
import { errorMessage } from '../../errors/error-message.js';

/** The share of the free disk that workspaces may take together unless the user says otherwise. */
export const DEFAULT_DISK_CAP_SHARE = 0.2;

export type ChosenWorkspaces =
  | { readonly ok: true; readonly provider: WorkspaceProvider; readonly forced: boolean; readonly reason: string }
  | { readonly ok: false; readonly error: string };

/**
 * Picks how this run makes workspaces (see `chooseWorkspaceProvider`), before anything is
 * recorded: a forced method that cannot work refuses the run with what to do instead.
 */
export async function chooseWorkspaces(repo: Repository, stateDir: string, choice: WorkspaceMethodChoice): Promise<ChosenWorkspaces> {
  const chosen = await chooseWorkspaceProvider(repo, choice, { storageDir: overlayStorageDirOf(stateDir) });
  if (chosen.ok) return chosen;
  return { ok: false, error: `${chosen.error}. Run without --workspaces (colony then picks what works here), or pass --workspaces worktree.` };
}

export interface StartWorkspacesOptions {
  readonly repo: Repository;
  readonly stateDir: string;
  /** The state directory's run lock, held by the caller: it is what makes sweeping safe. */
  readonly lock: RunLock;
  readonly chosen: Extract<ChosenWorkspaces, { ok: true }>;
  readonly record: (event: EventBody) => void;
  /** A cap on the disk all workspaces take together, or null for none. */
  readonly diskCapBytes: number | null;
  /** Workspaces (by id) of workers a resumed run takes up again: the sweep leaves them alone. */
  readonly keep?: ReadonlySet<string>;
}

export type StartedWorkspaces =
  | { readonly ok: true; readonly provider: WorkspaceProvider; readonly quota: WorkspaceQuota | null }
  | { readonly ok: false; readonly error: string };

/**
 * Gets the run's workspaces going: says which method was chosen and why, sweeps what dead runs
 * left behind (by either method), makes what workspaces share ahead of the first worker, and
 * puts the disk cap in front of the provider.
 */
export async function startWorkspaces(options: StartWorkspacesOptions): Promise<StartedWorkspaces> {
  const { repo, stateDir, chosen, record } = options;
  record({ type: 'workspace.method-chosen', data: { method: chosen.provider.method, forced: chosen.forced, reason: chosen.reason } });
  const others = chosen.provider.method === 'overlay' ? [createWorktreeProvider(repo)] : [createOverlayProvider(repo, { storageDir: overlayStorageDirOf(stateDir) })];
  await sweepWorkspaces({ repo, stateDir, lock: options.lock, workspacesDir: workspacesDirOf(stateDir), providers: [...others, chosen.provider], record, ...(options.keep === undefined ? {} : { keep: options.keep }) });
  try {
    await chosen.provider.prepare();
  } catch (error) {
    return { ok: false, error: `cannot prepare ${chosen.provider.method} workspaces: ${errorMessage(error)}` };
  }
  if (options.diskCapBytes === null) return { ok: true, provider: chosen.provider, quota: null };
  const quota = createWorkspaceQuota({ provider: chosen.provider, capBytes: options.diskCapBytes, record });
  return { ok: true, provider: quota.provider, quota };
}

/** The default cap: a fifth of the space free where the state directory is, when the run starts. */
export async function defaultDiskCapBytes(stateDir: string): Promise<number | null> {
  try {
    const info = await statfs(stateDir);
    return Math.floor(info.bavail * info.bsize * DEFAULT_DISK_CAP_SHARE);
  } catch {
    return null;
  }
}
