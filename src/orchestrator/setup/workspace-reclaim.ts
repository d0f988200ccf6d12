import type { EventBody } from '../../events/event-types.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import type { Repository } from '../../workspace/git/repository.js';
import { salvageWorkspace } from '../../workspace/salvage.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';
import { unmergedWork } from '../../workspace/workspace-status.js';

/** What was saved of a workspace's unlanded work before it was removed. */
export interface SalvagedWork {
  /** The commit made of its uncommitted files, or null when there were none. */
  readonly commit: string | null;
  readonly files: readonly string[];
  /** The branch holding every commit the workspace made. */
  readonly branch: string;
  /** A branch for work only a detached HEAD reached, or null. */
  readonly sideBranch: string | null;
}

/**
 * How reclaiming a finished workspace ended: `removed` it is gone (its branch stays whenever it
 * holds commits main lacks); `salvaged` what was saved first; `kept` why it is still on disk.
 */
export interface ReclaimOutcome {
  readonly removed: boolean;
  readonly salvaged: SalvagedWork | null;
  readonly kept: { readonly path: string; readonly reason: string } | null;
}

/**
 * Frees a workspace whose agent has ended, losing nothing: a workspace holding nothing unlanded
 * is removed with its branch; one holding unlanded work has it salvaged under colony's salvage
 * refs (see `salvageWorkspace`) and is then removed with its branch; one git cannot read, or whose
 * salvage fails, is kept and marked so nothing prunes it. Records `workspace.salvaged` and
 * `workspace.removed`. Never throws.
 */
export async function reclaimWorkspace(
  repo: Repository,
  provider: WorkspaceProvider,
  workspace: Workspace,
  record: (event: EventBody) => void,
): Promise<ReclaimOutcome> {
  const outcome = await decide(repo, provider, workspace, record);
  record({ type: 'workspace.removed', data: { path: workspace.path, kept: outcome.kept !== null } });
  return outcome;
}

async function decide(repo: Repository, provider: WorkspaceProvider, workspace: Workspace, record: (event: EventBody) => void): Promise<ReclaimOutcome> {
  const keep = async (reason: string, salvaged: SalvagedWork | null = null): Promise<ReclaimOutcome> => {
    const locked = await provider.keep(workspace, `colony kept this workspace: ${reason}`);
    const unlocked = locked.locked ? '' : ` It could not be marked against \`git worktree prune\` (${locked.error ?? 'unknown error'}).`;
    return { removed: false, salvaged, kept: { path: workspace.path, reason: `${reason}${unlocked}` } };
  };
  if (!(await pathExists(workspace.path))) {
    // Its files are gone already (deleted by hand, say): only git's record is left, and the
    // branch, which stays when it holds commits main lacks.
    const removal = await provider.remove(workspace, { deleteBranch: true });
    return removal.removed || !(await pathExists(workspace.path)) ? { removed: true, salvaged: null, kept: null } : keep(removal.reason);
  }
  const leftover = await unmergedWork(repo, workspace);
  if (leftover?.status === 'unreadable') return keep(leftover.reason);
  let salvaged: SalvagedWork | null = null;
  if (leftover !== null) {
    const saved = await salvageWorkspace(repo, workspace, leftover.reason);
    if (!saved.ok) return keep(`${leftover.reason} ${saved.error}`);
    salvaged = { commit: saved.commit, files: saved.files, branch: saved.branch, sideBranch: saved.sideBranch };
    record({ type: 'workspace.salvaged', data: { path: workspace.path, ...salvaged, files: [...saved.files], reason: leftover.reason } });
  }
  // The branch goes when main or a salvage ref holds its commits.
  const removal = await provider.remove(workspace, { deleteBranch: true });
  if (removal.removed || !(await pathExists(workspace.path))) return { removed: true, salvaged, kept: null };
  return keep(removal.reason, salvaged);
}

/** A sentence for a handoff's notes saying where salvaged work went. */
export function describeSalvage(salvaged: SalvagedWork, mainBranch: string): string {
  const parts: string[] = [];
  if (salvaged.commit !== null) {
    const shown = salvaged.files.slice(0, 10).join(', ') + (salvaged.files.length > 10 ? `, and ${salvaged.files.length - 10} more` : '');
    parts.push(`its ${salvaged.files.length} uncommitted file(s) (${shown}) were committed as ${salvaged.commit.slice(0, 12)}, kept with its commits as ${salvaged.branch}`);
  } else {
    parts.push(`its commits that did not land on ${mainBranch} are kept as ${salvaged.branch}`);
  }
  if (salvaged.sideBranch !== null) parts.push(`commits its detached HEAD held are kept as ${salvaged.sideBranch}`);
  return `Its workspace was removed after its unlanded work was salvaged: ${parts.join('; ')} (see it with git log ${salvaged.branch}). Nothing of it reached ${mainBranch}.`;
}
