import type { EventBody } from '../../events/event-types.js';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { createGoalWatch } from '../steering/goal-watch.js';
import { createSteeringRecorder, type SteeringEffects, type SteeringWriter } from '../steering/steering-record.js';
import type { Wakeups } from '../wakeups.js';

/**
 * How often the goal file is looked at. A `stat` every two seconds costs nothing worth
 * counting, and `fs.watch` alone would miss editors that replace the file instead of writing it.
 */
const GOAL_POLL_MS = 2_000;

export interface RunSteeringOptions {
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly runId: string;
  readonly rootTaskId: string;
  /** The goal file the run was started with (recorded in its settings, so a resumed run has it too). */
  readonly goalPath: string;
  /** Records one event of the run (as `system`). */
  readonly record: (body: EventBody) => void;
  readonly wakeups: Wakeups;
  /** The values the run's stores redact, so the goal file is compared as they keep it. */
  readonly secrets: readonly string[];
  readonly now: () => number;
  /** Acts on people's requests as they are recorded: the worker limit and stops (see `createRunControls`). */
  readonly effects?: SteeringEffects;
}

/** What a running run keeps for steering: the writer its agents and runner call, and the stop. */
export interface RunSteering {
  /**
   * Records what people did to the run through the task store. The runner calls it before it
   * claims (so a released andon is in the log before the claims it allows) and each planner before
   * it takes its inbox (so `message.sent` comes before its `message.received`).
   */
  readonly writer: SteeringWriter;
  /** Stops the looks, resolving once the one going (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Steering for a run while it goes, in the process that writes its log: what people did while
 * the run was down is recorded now, the goal file is looked at now and then every two
 * seconds, and an edit is told to the root planner (see `createGoalWatch`).
 */
export async function startSteering(options: RunSteeringOptions): Promise<RunSteering> {
  const { events, tasks, runId, record, wakeups } = options;
  const writer = createSteeringRecorder({ events, tasks, runId, record, wake: (key) => wakeups.wake(key), ...(options.effects === undefined ? {} : { effects: options.effects }) });
  const redactor = createSecretRedactor(options.secrets);
  const goal = createGoalWatch({
    path: options.goalPath,
    runId,
    rootTaskId: options.rootTaskId,
    events,
    tasks,
    record,
    steering: writer,
    redact: (text) => redactor.redactText(text),
    now: options.now,
  });
  const look = async (): Promise<void> => {
    try {
      await writer.recordSteering();
      await goal.check();
    } catch {
      // The stores failing under the run (a full disk, a broken file) is the runner's to report
      // and wait out; the goal is looked at again next time, with nothing marked as told.
    }
  };
  await look();
  // A look slower than the poll (a slow store) is not queued behind: the tick after it looks again.
  let looking: Promise<void> | null = null;
  const timer = setInterval(() => {
    looking ??= look().finally(() => {
      looking = null;
    });
  }, GOAL_POLL_MS);
  timer.unref();
  return {
    writer,
    stop: async () => {
      clearInterval(timer);
      await looking;
    },
  };
}
