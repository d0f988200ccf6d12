import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { RunControlStore } from '../../store/tasks/task-store.js';
import { RUNNER_WAKEUP } from '../wakeups.js';
import type { UserStop } from './user-stop.js';

/**
 * What the process that writes a run's event log does after a person steered the run. People
 * steer through the task store, which any number of processes may write (`colony say` and
 * `colony andon` from another terminal); the log takes one writing process, so the record of
 * what they did is written by that one.
 */
export interface SteeringWriter {
  /**
   * Records what people did to the run in the task store that the log does not hold yet (a
   * message left for a planner: `message.sent`; the user's andon pulled or released:
   * `andon.changed`; a new worker limit: `workers.changed`; a stop: `agent.stop-requested`),
   * each once and in the store's order, wakes whoever waits on it, and acts on the requests
   * (see `SteeringEffects`). Calls made while one is going run after it, one at a time.
   */
  recordSteering(): Promise<void>;
  /** The seq of the run's latest andon change the log has recorded (0: none), for claims to check against (`ClaimRequest.runAndonSeq`). */
  recordedAndonSeq(): Promise<number>;
}

/**
 * What the run's process does with people's requests as they are recorded: it runs up to the
 * new number of workers, and stops the agent on a task. Absent in a process that runs no
 * agents: the run then acts on them when it is resumed (the limit is read back from the log,
 * and a task with a stop asked for is closed when it is claimed).
 */
export interface SteeringEffects {
  workersChanged(workers: number): void;
  /** Stops the task's agent if this process runs it; does nothing otherwise. */
  stopTask(stop: UserStop): void;
  /** A green snapshot now, when this process runs the green loop. */
  greenRequested?(): void;
}

export interface SteeringRecorderOptions {
  readonly events: EventStore;
  readonly tasks: RunControlStore;
  readonly runId: string;
  /** Records one event of the run (as `system`). */
  readonly record: (body: EventBody) => void;
  /**
   * Wakes a waiting planner (by its task id) for its message, and the runner (`RUNNER_WAKEUP`)
   * when the run's andon is released; absent in a process that runs no agents.
   */
  readonly wake?: (key: string) => void;
  /** Acts on the requests recorded; absent in a process that runs no agents. */
  readonly effects?: SteeringEffects;
}

interface Marks {
  /** The highest inbox seq recorded as `message.sent`. */
  message: number;
  /** The highest run andon change recorded as `andon.changed`. */
  andon: number;
  /** The highest request recorded as `workers.changed` or `agent.stop-requested`. */
  request: number;
  /** The worker limit as the log has it (the run's setting, then each change); null before `run.configured`. */
  workers: number | null;
}

/**
 * The `SteeringWriter` of a process that may write the run's log. What is recorded already is
 * read from the log once, at the first call, so a restarted process (or a command that took
 * the log over while no run went) records exactly what the one before could not.
 */
export function createSteeringRecorder(options: SteeringRecorderOptions): SteeringWriter {
  const { tasks, runId, record } = options;
  let recorded: Marks | null = null;
  let turn: Promise<unknown> = Promise.resolve();
  /**
   * Runs `work` after the call going, if any. Each call reads the marks, then the store above
   * them, then records and moves the marks on: two at once (the runner's and a planner's) would
   * read the same rows above the same marks and record them twice.
   */
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work, work);
    turn = next.catch(() => undefined);
    return next;
  };
  const marksOf = async (): Promise<Marks> => {
    recorded ??= await recordedMarks(options.events, runId);
    return recorded;
  };
  const recordNew = async (): Promise<void> => {
    const marks = await marksOf();
    // Inbox and run andon rows are numbered in the order they were committed, so everything above
    // the mark is new, however many processes wrote them.
    for (const message of await tasks.personMessages(runId, marks.message)) {
      record({ type: 'message.sent', data: { recipientTaskId: message.recipientTaskId, text: message.text ?? '', inboxSeq: message.seq } });
      marks.message = message.seq;
      options.wake?.(message.recipientTaskId);
    }
    for (const change of await tasks.runAndonChanges(runId, marks.andon)) {
      record({ type: 'andon.changed', data: { taskId: null, paused: change.paused, reason: change.reason, by: 'user', andonSeq: change.seq } });
      marks.andon = change.seq;
      if (!change.paused) options.wake?.(RUNNER_WAKEUP);
    }
    for (const request of await tasks.runRequests(runId, marks.request)) {
      if (request.kind === 'workers') {
        record({ type: 'workers.changed', data: { workers: request.workers, previous: marks.workers ?? request.workers, by: 'user', requestSeq: request.seq } });
        marks.workers = request.workers;
        options.effects?.workersChanged(request.workers);
        // More workers may start now.
        options.wake?.(RUNNER_WAKEUP);
      } else if (request.kind === 'green') {
        record({ type: 'green.requested', data: { reason: request.reason, requestSeq: request.seq } });
        options.effects?.greenRequested?.();
      } else {
        const stoppedAgentId = await latestAgentOn(options.events, runId, request.taskId);
        record({ type: 'agent.stop-requested', data: { taskId: request.taskId, stoppedAgentId, reason: request.reason, requestSeq: request.seq } });
        options.effects?.stopTask({ kind: 'user-stop', taskId: request.taskId, reason: request.reason, requestSeq: request.seq });
      }
      marks.request = request.seq;
    }
  };
  return {
    recordSteering: () => inTurn(recordNew),
    recordedAndonSeq: () => inTurn(async () => (await marksOf()).andon),
  };
}

/** The agent started last on the task (a resumed one keeps its id), or null when none started on it. */
async function latestAgentOn(events: EventStore, runId: string, taskId: string): Promise<string | null> {
  const started = (await events.read({ runId, types: ['agent.started'] })).findLast((event) => event.type === 'agent.started' && event.data.taskId === taskId);
  return started?.agentId ?? null;
}

async function recordedMarks(events: EventStore, runId: string): Promise<Marks> {
  const marks: Marks = { message: 0, andon: 0, request: 0, workers: null };
  for (const event of await events.read({ runId, types: ['message.sent', 'andon.changed', 'run.configured', 'workers.changed', 'agent.stop-requested', 'green.requested'] })) {
    if (event.type === 'message.sent') marks.message = Math.max(marks.message, event.data.inboxSeq);
    else if (event.type === 'andon.changed' && event.data.andonSeq !== undefined) marks.andon = Math.max(marks.andon, event.data.andonSeq);
    else if (event.type === 'run.configured') marks.workers = event.data.settings.workers;
    else if (event.type === 'workers.changed') {
      marks.request = Math.max(marks.request, event.data.requestSeq);
      marks.workers = event.data.workers;
    } else if (event.type === 'agent.stop-requested' || event.type === 'green.requested') marks.request = Math.max(marks.request, event.data.requestSeq);
  }
  return marks;
}
