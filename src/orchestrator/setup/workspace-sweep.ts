import { resolve } from 'node:path';
import type { EventBody, EventData } from '../../events/event-types.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';
import type { RunLock } from './run-lock.js';
import { stateLockPath } from './state-directory.js';
import { reclaimWorkspace } from './workspace-reclaim.js';

export interface SweepOptions {
  readonly repo: Repository;
  readonly stateDir: string;
  /**
   * The state directory's run lock, held by the caller. Only the holder may sweep: every run
   * works under that lock, so while it is held no other run has workspaces here to lose.
   */
  readonly lock: RunLock;
  /** Where the runs of this state directory make workspaces. */
  readonly workspacesDir: string;
  /** Every method an earlier run may have used; each finds and removes its own leftovers. */
  readonly providers: readonly WorkspaceProvider[];
  readonly record: (event: EventBody) => void;
  /**
   * Ids of workspaces (an agent's id is its workspace's) that a resumed run gives back to their
   * agents: the sweep leaves them exactly as they are, neither reclaimed nor removed.
   */
  readonly keep?: ReadonlySet<string>;
}

/**
 * Clears what runs that ended without cleaning up (killed, crashed, the machine rebooted) left
 * in the workspaces directory, losing nothing: each leftover workspace is reclaimed like a
 * finished worker's (unlanded work salvaged onto its branch, then removed; unreadable ones
 * kept), then shared files nothing uses any more (old overlay bases) are deleted; workspaces
 * named in `keep`, and the bases they stand on, are left alone. Records
 * `workspace.swept` when there was anything to do. Throws only when called without holding
 * the state directory's run lock, which would be a bug.
 */
export async function sweepWorkspaces(options: SweepOptions): Promise<EventData<'workspace.swept'>> {
  const { repo, lock, record } = options;
  if (!lock.isHeld() || resolve(lock.path) !== resolve(stateLockPath(options.stateDir))) {
    throw new Error(`sweepWorkspaces needs the run lock of ${options.stateDir} held by its caller, got ${lock.path}`);
  }
  const report = { removed: [] as string[], salvaged: [] as string[], kept: [] as { path: string; reason: string }[], deleted: [] as string[], problems: [] as string[] };
  if (await pathExists(options.workspacesDir)) {
    for (const provider of options.providers) {
      const found = await provider.find(options.workspacesDir);
      report.problems.push(...found.problems);
      for (const workspace of found.workspaces) {
        if (options.keep?.has(workspace.id) === true) continue;
        const outcome = await reclaimWorkspace(repo, provider, workspace, record);
        if (outcome.salvaged !== null) report.salvaged.push(workspace.path);
        if (outcome.removed) report.removed.push(workspace.path);
        if (outcome.kept !== null) report.kept.push(outcome.kept);
      }
      report.deleted.push(...(await provider.prune()));
    }
  }
  const anything = report.removed.length + report.kept.length + report.deleted.length + report.problems.length > 0;
  if (anything) record({ type: 'workspace.swept', data: report });
  return report;
}
