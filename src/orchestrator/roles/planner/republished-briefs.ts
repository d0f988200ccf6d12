import type { TaskRecord, TaskStore } from '../../../store/tasks/task-store.js';
import { REPUBLISHED_OPENING } from '../../../protocol/message-openings.js';

/**
 * Briefs a planner publishes again as they were, without `retry_of`: a real model's way of
 * trying a failed task again that slips past the retry cap and leaves out what the earlier
 * attempt found. A planner's board refuses the first such `create_task` for each failed task.
 */
export interface RepublishedBriefs {
  /**
   * The refusal of a `create_task` without `retry_of` whose brief is, whitespace aside, that of
   * a worker task of this planner's that ended failed, blocked or partial and was not retried;
   * null when there is none, or when a publish of that brief was refused before (the second
   * is taken as it is).
   */
  refusal(brief: string): Promise<string | null>;
  /** Tells it the planner published `task`. */
  published(task: TaskRecord): void;
}

/** The statuses of a task that ended without its work done. */
const UNFINISHED: ReadonlySet<TaskRecord['status']> = new Set(['failed', 'blocked', 'partial']);

/**
 * The republished briefs of `planner`'s board. `briefOf` gives a stored task's brief as its
 * planner wrote it, without what colony appended. Its children are read from the store once,
 * at the first publish it is asked about, then followed as the board publishes; a task's
 * ending is read when a brief repeats its.
 */
export function watchRepublishedBriefs(tasks: TaskStore, planner: TaskRecord, briefOf: (task: TaskRecord) => string): RepublishedBriefs {
  let index: { byBrief: Map<string, string[]>; retried: Set<string> } | null = null;
  const refused = new Set<string>();
  const add = (into: NonNullable<typeof index>, task: TaskRecord): void => {
    if (task.retryOf !== null) into.retried.add(task.retryOf);
    if (task.kind !== 'worker') return;
    const key = normalized(briefOf(task));
    into.byBrief.set(key, [...(into.byBrief.get(key) ?? []), task.id]);
  };
  const read = async (): Promise<NonNullable<typeof index>> => {
    if (index !== null) return index;
    const built = { byBrief: new Map<string, string[]>(), retried: new Set<string>() };
    for (const child of await tasks.listChildren(planner.id)) add(built, child);
    index = built;
    return built;
  };
  return {
    async refusal(brief) {
      const known = await read();
      const ids = known.byBrief.get(normalized(brief)) ?? [];
      for (const id of [...ids].reverse()) {
        if (known.retried.has(id) || refused.has(id)) continue;
        const task = await tasks.getTask(id);
        if (task === null || !UNFINISHED.has(task.status)) continue;
        refused.add(id);
        return republishedText(task);
      }
      return null;
    },
    published(task) {
      if (index !== null) add(index, task);
    },
  };
}

function normalized(brief: string): string {
  return brief.trim().replace(/\s+/g, ' ');
}

/** Why a failed task's brief published again as it was is refused, and what to do instead. */
function republishedText(task: TaskRecord): string {
  return (
    `${REPUBLISHED_OPENING} this brief is task ${task.id}'s ("${task.title}"), which ended ${task.status}. ` +
    `To try that work again, publish it with retry_of: ${task.id} and say in the brief what this attempt should do differently; ` +
    'colony then adds what the earlier attempts handed off, and counts the attempts. ' +
    'Or publish different work: split it, or publish first what it was missing.'
  );
}
