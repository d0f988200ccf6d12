import type { EventStore } from '../store/event-store.js';
import type { TaskOverlap } from '../tools/planner-tools.js';
import { PathIndex } from './path-overlap.js';
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
  picture(): FilesPicture;
  /**
   * Tasks in flight whose declared paths (or scope) or changed files meet `paths`, in creation
   * order; the planner's own task and its ancestors are left out (their scopes hold it).
   */
  overlapsWith(paths: readonly string[], plannerTaskId: string): TaskOverlap[];
}

type Source = 'declared' | 'touched';

export function createWorkInFlight(events: EventStore, runId: string): WorkInFlight {
  const fold = createWorkInFlightFold(runId);
  const refresh = (): TaskInFlight[] => {
    for (const event of events.read({ runId, afterSeq: fold.lastSeq, types: WORK_IN_FLIGHT_EVENT_TYPES })) fold.add(event);
    return fold.inFlight();
  };

  return {
    picture() {
      const workers = refresh().filter((task) => task.kind === 'worker');
      return { inFlight: workers, shared: sharedPaths(workers), hot: fold.hotFiles() };
    },
    overlapsWith(paths, plannerTaskId) {
      const tasks = refresh();
      const excluded = new Set<string>();
      for (let id: string | null | undefined = plannerTaskId; id !== null && id !== undefined && !excluded.has(id); id = fold.parentOf(id)) {
        excluded.add(id);
      }
      const index = indexOf(tasks.filter((task) => !excluded.has(task.taskId)));
      const meetings = new Map<string, { declared: Set<string>; touched: Set<string> }>();
      const meet = (owner: string, source: Source, path: string): void => {
        const found = meetings.get(owner) ?? { declared: new Set<string>(), touched: new Set<string>() };
        found[source].add(path);
        meetings.set(owner, found);
      };
      for (const path of paths) {
        for (const entry of [...index.atOrAbove(path), ...index.below(path)]) meet(entry.owner, entry.source, entry.path);
      }
      return tasks.flatMap((task) => {
        const found = meetings.get(task.taskId);
        if (found === undefined) return [];
        const { taskId, title, kind, state } = task;
        return [{ taskId, title, kind, state, declared: [...found.declared], touched: [...found.touched] }];
      });
    },
  };
}

function indexOf(tasks: readonly TaskInFlight[]): PathIndex<Source> {
  const index = new PathIndex<Source>();
  for (const task of tasks) {
    for (const path of task.declared) index.add(task.taskId, path, 'declared');
    for (const path of task.touched) index.add(task.taskId, path, 'touched');
  }
  return index;
}

/**
 * Every path of a task that another task also covers: the same path, or a folder above it.
 * A folder is listed only where a path of another task equals it; a file below it that two
 * tasks meet on is listed as that file.
 */
function sharedPaths(tasks: readonly TaskInFlight[]): SharedPath[] {
  const index = indexOf(tasks);
  const order = new Map(tasks.map((task, position) => [task.taskId, position]));
  // Keyed without a folder's trailing slash, so `src/text` and `src/text/` are one entry.
  const shared = new Map<string, { path: string; owners: Set<string> }>();
  for (const task of tasks) {
    for (const path of new Set([...task.declared, ...task.touched])) {
      const owners = new Set(index.atOrAbove(path).map((entry) => entry.owner));
      if (owners.size < 2) continue;
      const key = path.replace(/\/+$/, '');
      const existing = shared.get(key) ?? { path, owners: new Set<string>() };
      for (const owner of owners) existing.owners.add(owner);
      shared.set(key, existing);
    }
  }
  return [...shared.values()]
    .map(({ path, owners }) => ({
      path,
      taskIds: [...owners].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)),
    }))
    .sort((a, b) => b.taskIds.length - a.taskIds.length || a.path.localeCompare(b.path));
}
