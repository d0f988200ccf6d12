import { mkdir } from 'node:fs/promises';
import { createOverlayProvider, type OverlayProviderOptions } from './overlay/overlay-provider.js';
import { probeOverlaySupport } from './overlay/overlay-probe.js';
import type { Repository } from '../git/repository.js';
import type { WorkspaceMethodChoice } from '../workspace-method-choice.js';
import type { WorkspaceProvider } from '../workspace-provider.js';
import { createWorktreeProvider } from './worktree/worktree-provider.js';
import { errorMessage } from '../../errors/error-message.js';

export type ChosenWorkspaceProvider =
  | { readonly ok: true; readonly provider: WorkspaceProvider; readonly forced: boolean; readonly reason: string }
  | { readonly ok: false; readonly error: string };

/**
 * Picks how workspaces are made for a run. `auto` tries one real overlay mount in
 * `options.storageDir` and takes overlay when it works, worktree otherwise; a forced `overlay`
 * that cannot work is an error saying why, never a silent fallback. `reason` says in a
 * sentence why this method was taken.
 */
export async function chooseWorkspaceProvider(
  repo: Repository,
  choice: WorkspaceMethodChoice,
  options: OverlayProviderOptions,
): Promise<ChosenWorkspaceProvider> {
  if (choice === 'worktree') return { ok: true, provider: createWorktreeProvider(repo), forced: true, reason: 'worktree workspaces were asked for' };
  try {
    await mkdir(options.storageDir, { recursive: true });
  } catch (error) {
    const why = `cannot make ${options.storageDir}: ${errorMessage(error)}`;
    if (choice === 'overlay') return { ok: false, error: `overlay workspaces were asked for, but ${why}` };
    return { ok: true, provider: createWorktreeProvider(repo), forced: false, reason: `overlay workspaces cannot be used: ${why}` };
  }
  const support = await probeOverlaySupport(options.storageDir);
  if (support.ok) {
    const reason = choice === 'overlay' ? 'overlay workspaces were asked for' : `overlay mounts work in ${options.storageDir}`;
    return { ok: true, provider: createOverlayProvider(repo, options), forced: choice === 'overlay', reason };
  }
  if (choice === 'overlay') return { ok: false, error: `overlay workspaces were asked for, but they cannot be used: ${support.error}` };
  return { ok: true, provider: createWorktreeProvider(repo), forced: false, reason: `overlay workspaces cannot be used: ${support.error}` };
}
