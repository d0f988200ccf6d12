import type { EventBody } from '../../events/event-types.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';

/** A cap on the disk a run's workspaces take together. */
export interface WorkspaceQuota {
  /** The provider to make workspaces with: the same one, keeping account of what exists. */
  readonly provider: WorkspaceProvider;
  readonly capBytes: number;
  /**
   * Whether another workspace fits under the cap now. While workers are running it answers no
   * when the workspaces (those that exist, those being made, and the new one) would exceed the
   * cap, and records `workspace.quota-reached` when that starts; finished workers free their
   * workspaces, so the caller asks again later. With no worker running nothing would free
   * space, so it answers yes rather than stall the run. Never stops running work.
   */
  admit(runningWorkers: number): Promise<boolean>;
  /** Bytes the workspaces take now, as last measured. */
  usedBytes(): number;
}

export interface WorkspaceQuotaOptions {
  readonly provider: WorkspaceProvider;
  readonly capBytes: number;
  readonly record: (event: EventBody) => void;
  /** Milliseconds since the epoch, for the age of measurements; default Date.now. */
  readonly now?: () => number;
}

interface Tracked {
  readonly workspace: Workspace;
  /** Null until first measured; the provider's estimate for a fresh one stands in. */
  bytes: number | null;
  measuredAt: number;
  costMs: number;
}

/** A measurement is reused until it is this old, or twenty times as old as it took to make, whichever is longer. */
const MIN_MEASUREMENT_AGE_MS = 2_000;
const MEASUREMENT_AGE_OVER_COST = 20;

/**
 * Keeps account of the workspaces made through `provider` and holds new ones back when they
 * would not fit. Measuring a worktree takes time on a large repository, so each workspace is
 * measured when first needed and then again only when its figure is stale (adaptively: never
 * more than about a twentieth of the time goes to measuring), the stalest one per question.
 */
export function createWorkspaceQuota(options: WorkspaceQuotaOptions): WorkspaceQuota {
  const { provider, capBytes, record } = options;
  const now = options.now ?? Date.now;
  const tracked = new Map<string, Tracked>();
  let creating = 0;
  let holding = false;
  let freshBytes: number | null = null;

  const measure = async (entry: Tracked): Promise<void> => {
    const started = performance.now();
    entry.bytes = await provider.diskUsage([entry.workspace]);
    entry.costMs = performance.now() - started;
    entry.measuredAt = now();
  };

  const isStale = (entry: Tracked): boolean =>
    entry.bytes === null || now() - entry.measuredAt > Math.max(MIN_MEASUREMENT_AGE_MS, MEASUREMENT_AGE_OVER_COST * entry.costMs);

  const counted: WorkspaceProvider = {
    ...provider,
    async create(createOptions) {
      creating += 1;
      try {
        const workspace = await provider.create(createOptions);
        tracked.set(workspace.id, { workspace, bytes: null, measuredAt: 0, costMs: 0 });
        return workspace;
      } finally {
        creating -= 1;
      }
    },
    async remove(workspace, removeOptions) {
      const result = await provider.remove(workspace, removeOptions);
      if (result.removed || !(await pathExists(workspace.path))) tracked.delete(workspace.id);
      return result;
    },
  };

  const used = (fresh: number): number => {
    let total = creating * fresh;
    for (const entry of tracked.values()) total += entry.bytes ?? fresh;
    return total;
  };

  return {
    provider: counted,
    capBytes,
    usedBytes: () => used(freshBytes ?? 0),
    async admit(runningWorkers) {
      freshBytes ??= await provider.estimateFreshBytes();
      const entries = [...tracked.values()];
      const unmeasured = entries.filter((entry) => entry.bytes === null);
      const stalest = entries.filter((entry) => entry.bytes !== null && isStale(entry)).sort((a, b) => a.measuredAt - b.measuredAt)[0];
      for (const entry of stalest === undefined ? unmeasured : [...unmeasured, stalest]) await measure(entry);
      const usedNow = used(freshBytes);
      if (usedNow + freshBytes <= capBytes || runningWorkers === 0) {
        holding = false;
        return true;
      }
      if (!holding) {
        holding = true;
        record({ type: 'workspace.quota-reached', data: { usedBytes: usedNow, capBytes, workspaces: tracked.size + creating, runningWorkers } });
      }
      return false;
    },
  };
}
