import type { EventStore } from '../../store/events/event-store.js';
import type { TaskOverlap } from '../../tools/task-overlap-text.js';
import { ancestorsOf, pathKey, pathsMeet } from './path-overlap.js';
import { createWorkInFlightFold, WORK_IN_FLIGHT_EVENT_TYPES, type HotFile, type TaskInFlight } from './work-in-flight-fold.js';

export type { HotFile, TaskInFlight } from './work-in-flight-fold.js';

/** A path that several worker tasks in flight declare or changed (or that a folder of one covers). */
export interface SharedPath {
  readonly path: string;
  /** In creation order. */
  readonly taskIds: readonly string[];
}

/** What planners are shown of the run's files: work in flight, where it meets, where merges meet. */
export interface FilesPicture {
  /** Worker tasks not closed yet, in creation order. */
  readonly inFlight: readonly TaskInFlight[];
  /** The most shared first. */
  readonly shared: readonly SharedPath[];
  readonly hot: readonly HotFile[];
}

/**
 * The run's work in flight, kept current from the event log: every read first folds the
 * events recorded since the last one (by any agent, in any process writing to the store).
 * One per run, shared by its planners.
 */
export interface WorkInFlight {
  picture(): Promise<FilesPicture>;
  /**
   * Tasks in flight whose declared paths (or scope) or changed files meet `paths`, in creation
   * order; the planner's own task and its ancestors are left out (their scopes hold it).
   */
  overlapsWith(paths: readonly string[], plannerTaskId: string): Promise<TaskOverlap[]>;
}

export function createWorkInFlight(events: EventStore, runId: string): WorkInFlight {
  const fold = createWorkInFlightFold(runId);
  const refresh = async (): Promise<TaskInFlight[]> => {
    // Reads that overlap (two planners asking at once) fold each event once: the fold skips what it has.
    for (const event of await events.read({ runId, afterSeq: fold.lastSeq, types: WORK_IN_FLIGHT_EVENT_TYPES })) fold.add(event);
    return fold.inFlight();
  };

  return {
    async picture() {
      const workers = (await refresh()).filter((task) => task.kind === 'worker');
      return { inFlight: workers, shared: sharedPaths(workers), hot: fold.hotFiles() };
    },
    async overlapsWith(paths, plannerTaskId) {
      const tasks = await refresh();
      const excluded = new Set<string>();
      for (let id: string | null | undefined = plannerTaskId; id !== null && id !== undefined && !excluded.has(id); id = fold.parentOf(id)) {
        excluded.add(id);
      }
      // A scan, not an index: a handful of new paths against every path in flight is cheaper
      // than building an index for one question.
      const meeting = (own: readonly string[]): string[] => own.filter((path) => paths.some((other) => pathsMeet(path, other)));
      return tasks.flatMap((task) => {
        if (excluded.has(task.taskId)) return [];
        const declared = meeting(task.declared);
        const touched = meeting(task.touched);
        if (declared.length === 0 && touched.length === 0) return [];
        const { taskId, title, kind, state } = task;
        return [{ taskId, title, kind, state, declared, touched }];
      });
    },
  };
}

/**
 * Every path that two or more tasks cover: by having it, or a folder above it. Each distinct
 * path is looked at once, with its folders, so a file every task shares costs once, not once
 * per task. A folder is listed only where tasks have that folder itself; a file below it that
 * tasks meet on is listed as that file.
 */
function sharedPaths(tasks: readonly TaskInFlight[]): SharedPath[] {
  // Owners as arrays, not sets: one task adds all its paths in a row, so a repeat is always the last one.
  const byKey = new Map<string, { path: string; owners: string[] }>();
  for (const task of tasks) {
    for (const paths of [task.declared, task.touched]) {
      for (const path of paths) {
        const key = pathKey(path);
        const entry = byKey.get(key);
        if (entry === undefined) byKey.set(key, { path, owners: [task.taskId] });
        else if (entry.owners.at(-1) !== task.taskId) entry.owners.push(task.taskId);
      }
    }
  }
  const order = new Map(tasks.map((task, position) => [task.taskId, position]));
  const shared: SharedPath[] = [];
  for (const [key, entry] of byKey) {
    let owners: Set<string> | null = entry.owners.length > 1 ? new Set(entry.owners) : null;
    for (const folder of ancestorsOf(key)) {
      const above = byKey.get(folder);
      if (above === undefined) continue;
      owners ??= new Set(entry.owners);
      for (const owner of above.owners) owners.add(owner);
    }
    if (owners === null || owners.size < 2) continue;
    shared.push({ path: entry.path, taskIds: [...owners].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)) });
  }
  return shared.sort((a, b) => b.taskIds.length - a.taskIds.length || a.path.localeCompare(b.path));
}
