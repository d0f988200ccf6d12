import { readFileSync, statSync, type Stats } from 'node:fs';
import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { goalChangedMessage } from './goal-change-message.js';
import { diffLines } from './goal-diff.js';
import type { SteeringWriter } from './steering-record.js';
import { errorMessage } from '../../errors/error-message.js';

export interface GoalWatchOptions {
  /** The goal file the run was started with. */
  readonly path: string;
  readonly runId: string;
  readonly rootTaskId: string;
  readonly events: EventStore;
  /** Where the root task's brief is read and the message left. */
  readonly tasks: Pick<TaskStore, 'getTask' | 'sendMessage'>;
  /** Records one event of the run (as `system`). */
  readonly record: (body: EventBody) => void;
  /** Records the message left for the root planner (`message.sent`) and wakes it. */
  readonly steering: SteeringWriter;
  /**
   * The text as the stores keep it (secrets and URL credentials replaced): the goal the root
   * planner was told is the redacted one, so the file is compared in the same form, and a goal
   * holding a secret is not taken for an edit.
   */
  readonly redact: (text: string) => string;
  readonly now: () => number;
}

/** Watches a run's goal file; each `check` looks once. */
export interface GoalWatch {
  /**
   * Looks at the goal file: a `stat` only, unless its size or times changed. When its content
   * differs from the goal the root planner was told last, the root planner gets a message with
   * the changed lines and the whole new goal (`goal.changed`, then `message.sent`). A file that
   * is gone, unreadable or empty is recorded once (`goal.changed` with `error`) and not sent.
   * A check asked for while one is going runs after it.
   */
  check(): Promise<void>;
}

interface Told {
  /** The goal the root planner was told last, as the stores keep it. */
  goal: string;
  /** Whether the file's being unreadable is recorded, and not yet over. */
  unreadable: boolean;
}

/**
 * The goal watch of a run. What the root planner was told is read back from the log at the
 * first check (the last `goal.changed`, else the root task's brief), so a goal edited while the
 * run was down is told once when it is resumed, and an edit already told is not told again.
 */
export function createGoalWatch(options: GoalWatchOptions): GoalWatch {
  const { path } = options;
  let told: Told | null = null;
  // The file as it was when its content was last handled: nothing to read while it stays so.
  let seen: Stats | null = null;
  // One check at a time: one that read the file and has not yet recorded what it told would
  // let a second tell the same edit again.
  let going: Promise<void> = Promise.resolve();

  const reportUnreadable = (state: Told, error: string): void => {
    seen = null;
    if (state.unreadable) return;
    state.unreadable = true;
    options.record({ type: 'goal.changed', data: { path, added: 0, removed: 0, error } });
  };

  const check = async (): Promise<void> => {
    told ??= await toldBefore(options);
    const state = told;
    const read = readGoal(path, seen);
    if (read.kind === 'unchanged' || read.kind === 'changing') return;
    if (read.kind === 'unreadable') {
      reportUnreadable(state, read.error);
      return;
    }
    seen = read.stats;
    if (read.content.trim() === '') {
      reportUnreadable(state, 'the file is empty; the root planner keeps the goal it has');
      return;
    }
    state.unreadable = false;
    const goal = options.redact(read.content);
    if (goal === state.goal) return;
    const diff = diffLines(state.goal, goal);
    // Only line endings or a final newline changed: nothing the planner would read differently.
    if (diff.added.length === 0 && diff.removed.length === 0) return;
    await options.tasks.sendMessage(options.runId, options.rootTaskId, goalChangedMessage(path, diff, goal), options.now());
    options.record({ type: 'goal.changed', data: { path, added: diff.added.length, removed: diff.removed.length, goal } });
    state.goal = goal;
    await options.steering.recordSteering();
    // Durable at once: a restart between the message and its record would tell the edit twice.
    await options.events.flush();
  };

  return {
    check() {
      const next = going.then(check, check);
      going = next.catch(() => undefined);
      return next;
    },
  };
}

type GoalRead =
  | { readonly kind: 'unchanged' }
  /** Being written: its size or times moved while it was read. */
  | { readonly kind: 'changing' }
  | { readonly kind: 'unreadable'; readonly error: string }
  | { readonly kind: 'read'; readonly content: string; readonly stats: Stats };

function readGoal(path: string, seen: Stats | null): GoalRead {
  let before: Stats;
  let content: string;
  try {
    before = statSync(path);
    if (!before.isFile()) return { kind: 'unreadable', error: 'it is not a file any more' };
    if (seen !== null && sameFile(seen, before)) return { kind: 'unchanged' };
    content = readFileSync(path, 'utf8');
    // Editors replace the file (a rename) or write it in place; one caught mid-write is read next time.
    if (!sameFile(before, statSync(path))) return { kind: 'changing' };
  } catch (error) {
    return { kind: 'unreadable', error: describeFileError(error) };
  }
  return { kind: 'read', content, stats: before };
}

function sameFile(first: Stats, second: Stats): boolean {
  return first.ino === second.ino && first.size === second.size && first.mtimeMs === second.mtimeMs && first.ctimeMs === second.ctimeMs;
}

function describeFileError(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  if (code === 'ENOENT') return 'the file is gone; the root planner keeps the goal it has';
  if (code === 'EACCES' || code === 'EPERM') return 'colony may not read the file any more; the root planner keeps the goal it has';
  return `${errorMessage(error)}; the root planner keeps the goal it has`;
}

/** The goal the root planner was told last, and whether the file's being unreadable was recorded last. */
async function toldBefore(options: GoalWatchOptions): Promise<Told> {
  const changes = await options.events.read({ runId: options.runId, types: ['goal.changed'] });
  let goal: string | null = null;
  let unreadable = false;
  for (const event of changes) {
    if (event.type !== 'goal.changed') continue;
    if (event.data.error !== undefined) unreadable = true;
    else if (event.data.goal !== undefined) {
      goal = event.data.goal;
      unreadable = false;
    }
  }
  return { goal: goal ?? (await options.tasks.getTask(options.rootTaskId))?.body ?? '', unreadable };
}
