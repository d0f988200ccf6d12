import type { EventBody } from '../events/event-types.js';
import type { EventStore } from '../store/event-store.js';
import type { TaskStore } from '../store/task-store.js';
import { RUNNER_WAKEUP } from './run-context.js';

/**
 * What the process that writes a run's event log does after a person steered the run. People
 * steer through the task store, which any number of processes may write (`colony say` and
 * `colony andon` from another terminal); the log takes one writing process, so the record of
 * what they did is written by that one.
 */
export interface SteeringWriter {
  /**
   * Records what people did to the run in the task store that the log does not hold yet (a
   * message left for a planner: `message.sent`; the user's hold set or lifted:
   * `andon.changed`), each once and in the store's order, and wakes whoever waits on it.
   */
  recordSteering(): void;
}

export interface SteeringRecorderOptions {
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly runId: string;
  /** Records one event of the run (as `system`). */
  readonly record: (body: EventBody) => void;
  /**
   * Wakes a waiting planner (by its task id) for its message, and the runner (`RUNNER_WAKEUP`)
   * when the hold is lifted; absent in a process that runs no agents.
   */
  readonly wake?: (key: string) => void;
}

interface Marks {
  /** The highest inbox seq recorded as `message.sent`. */
  message: number;
  /** The highest hold change recorded as `andon.changed`. */
  hold: number;
}

/**
 * The `SteeringWriter` of a process that may write the run's log. What is recorded already is
 * read from the log once, at the first call, so a restarted process (or a command that took
 * the log over while no run went) records exactly what the one before could not.
 */
export function createSteeringRecorder(options: SteeringRecorderOptions): SteeringWriter {
  const { tasks, runId, record } = options;
  let marks: Marks | null = null;
  return {
    recordSteering() {
      marks ??= recordedMarks(options.events, runId);
      // Inbox and hold rows are numbered in the order they were committed, so everything above
      // the mark is new, however many processes wrote them.
      for (const message of tasks.personMessages(runId, marks.message)) {
        record({ type: 'message.sent', data: { recipientTaskId: message.recipientTaskId, text: message.text ?? '', inboxSeq: message.seq } });
        marks.message = message.seq;
        options.wake?.(message.recipientTaskId);
      }
      for (const change of tasks.runHoldChanges(runId, marks.hold)) {
        record({ type: 'andon.changed', data: { taskId: null, paused: change.held, reason: change.reason, by: 'user', holdSeq: change.seq } });
        marks.hold = change.seq;
        if (!change.held) options.wake?.(RUNNER_WAKEUP);
      }
    },
  };
}

function recordedMarks(events: EventStore, runId: string): Marks {
  const marks: Marks = { message: 0, hold: 0 };
  for (const event of events.read({ runId, types: ['message.sent', 'andon.changed'] })) {
    if (event.type === 'message.sent') marks.message = Math.max(marks.message, event.data.inboxSeq);
    else if (event.type === 'andon.changed' && event.data.holdSeq !== undefined) marks.hold = Math.max(marks.hold, event.data.holdSeq);
  }
  return marks;
}
