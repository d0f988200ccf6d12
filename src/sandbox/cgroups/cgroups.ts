import { v1Hierarchies, type CgroupLayout } from './cgroup-layout.js';
import { openCgroupsV1 } from './cgroup-v1.js';
import { markOwner, removeRunCgroupsNow, sweepStaleRuns } from './cgroup-sweep.js';
import { HARNESS_LEAF, openCgroupsV2, v2RunParent } from './cgroup-v2.js';
import type { RunCgroupsOpening } from './types.js';

/** `colony-<run>`, with anything but letters, digits, `.`, `_` and `-` replaced. */
export function runCgroupName(runId: string): string {
  return `colony-${runId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}`;
}

/**
 * The name of the cgroup `pid` opens for a run: one per process, not per run, since a run's own
 * process and its worker hosts on the same machine each open the run's sandbox, and one closing
 * must not take the others' cgroups with it.
 */
export function processRunCgroupName(runId: string, pid: number = process.pid): string {
  return runCgroupName(`${runId}-${pid}`);
}

/** The directories of the runs this process has open and not closed, removed on process 'exit'. */
const openRuns = new Set<readonly string[]>();

function removeOpenRunsNow(): void {
  for (const directories of openRuns) removeRunCgroupsNow(directories);
}

/**
 * Makes the run's parent cgroup for `layout`; `ownPid` is the harness's pid (v2 may move it to
 * a leaf). First it sweeps the runs under the same parent that a process which has ended left
 * behind (`cgroup-sweep.ts`). The run is marked as this process's, and removed on process
 * 'exit' if `close()` has not run by then (a forced quit calls process.exit).
 */
export function openRunCgroups(layout: CgroupLayout, runId: string, ownPid: number = process.pid): RunCgroupsOpening {
  const name = processRunCgroupName(runId, ownPid);
  const parents = layout.version === 1 ? v1Hierarchies(layout) : [v2RunParent(layout.own)];
  sweepStaleRuns(parents, name, [HARNESS_LEAF]);
  const opened = layout.version === 1 ? openCgroupsV1(layout, name) : openCgroupsV2(layout, name, ownPid);
  if (!opened.ok) return opened;
  const run = opened.cgroups;
  const marked = markOwner(run.directories);
  if (marked !== null) {
    // Nothing has run in it yet, so it is empty and goes at once.
    removeRunCgroupsNow(run.directories);
    return { ok: false, error: marked };
  }
  openRuns.add(run.directories);
  if (openRuns.size === 1) process.on('exit', removeOpenRunsNow);
  const close = async (): Promise<void> => {
    if (openRuns.delete(run.directories) && openRuns.size === 0) process.off('exit', removeOpenRunsNow);
    await run.close();
  };
  return { ok: true, cgroups: { ...run, close } };
}
