import { setMaxListeners } from 'node:events';
import type { Handoff } from '../events/handoff.js';
import type { TaskKind, TaskRecord } from '../store/task-store.js';
import { createAgentRecorder } from './agent-recorder.js';
import type { RunContext } from './run-context.js';
import { RUNNER_WAKEUP } from './run-context.js';
import { runPlannerTask, type TaskExecution } from './run-planner-task.js';
import { runWorkerTask } from './run-worker-task.js';

/** How often the runner looks for claimable tasks without a wake-up (another process may have published). */
const CLAIM_POLL_MS = 500;

export interface TaskRunnerOptions {
  readonly context: RunContext;
  /** Who holds the leases this runner takes. */
  readonly holder: string;
  /** The most workers running at once; planners do not count. Read before every claim. */
  readonly workers: () => number;
  readonly leaseMs: number;
  /** The run is over when this task closes. */
  readonly rootTaskId: string;
  /** Aborting stops the run: agents stop at a safe point and their tasks are released, not closed. */
  readonly signal: AbortSignal;
}

export interface RunnerOutcome {
  /** The root task's handoff, or null when the run was stopped before it closed. */
  readonly rootHandoff: Handoff | null;
  readonly released: number;
}

/**
 * Claims tasks from the store and runs each as an async agent loop in this process: planners
 * whenever there are any, workers up to `workers()` at once. Heartbeats its leases; closes each
 * task with its agent's handoff (which the store delivers to the parent's inbox); returns when
 * the root task closes or the signal aborts, after every agent it started has stopped.
 */
export async function runTasks(options: TaskRunnerOptions): Promise<RunnerOutcome> {
  const { context, holder, leaseMs } = options;
  const { tasks, wakeups } = context;
  const agents = new AbortController();
  // Every running agent listens on this one signal (its model calls, commands and waits).
  setMaxListeners(0, agents.signal);
  const stopAgents = () => agents.abort();
  options.signal.addEventListener('abort', stopAgents, { once: true });
  const running = new Map<string, Promise<void>>();
  let runningWorkers = 0;
  let released = 0;
  const heartbeat = setInterval(() => tasks.renewLeases(holder, context.now(), leaseMs), Math.max(50, Math.floor(leaseMs / 3)));

  const { record } = createAgentRecorder(context.events, context.runId, 'system', context.onEvent);

  const finishTask = (task: TaskRecord, execution: TaskExecution): void => {
    if (agents.signal.aborted) {
      // Stopped, not finished: the task goes back to the store for the next run to take.
      if (tasks.release(task.id, holder)) {
        released += 1;
        record({ type: 'task.released', data: { taskId: task.id, reason: 'the run was stopped' } });
      }
      return;
    }
    const completed = tasks.complete(task.id, holder, execution.handoff, context.now());
    if (!completed.ok) {
      record({ type: 'task.released', data: { taskId: task.id, reason: `its handoff could not be delivered: ${completed.reason}` } });
      return;
    }
    record({ type: 'handoff.delivered', data: { taskId: task.id, parentTaskId: task.parentTaskId, status: execution.handoff.status } });
    context.events.flush();
    if (task.parentTaskId !== null) wakeups.wake(task.parentTaskId);
  };

  const start = (task: TaskRecord): void => {
    record({ type: 'task.claimed', data: { taskId: task.id, kind: task.kind, attempt: task.attempt, holder } });
    if (task.kind === 'worker') runningWorkers += 1;
    const run = execute(context, task, agents.signal)
      .then((execution) => finishTask(task, execution))
      .finally(() => {
        running.delete(task.id);
        if (task.kind === 'worker') runningWorkers -= 1;
        wakeups.wake(RUNNER_WAKEUP);
      });
    running.set(task.id, run);
  };

  const claim = (kinds: readonly TaskKind[]): TaskRecord | null =>
    tasks.claim({ runId: context.runId, holder, kinds, now: context.now(), leaseMs });

  try {
    while (!options.signal.aborted && isOpen(tasks.getTask(options.rootTaskId))) {
      for (let task = claim(['planner']); task !== null; task = claim(['planner'])) start(task);
      while (runningWorkers < options.workers()) {
        const task = claim(['worker']);
        if (task === null) break;
        start(task);
      }
      await wakeups.wait(RUNNER_WAKEUP, options.signal, CLAIM_POLL_MS);
    }
    // The root closed (or the run was stopped): whatever still runs below a failed planner stops too.
    agents.abort();
    while (running.size > 0) await Promise.allSettled([...running.values()]);
  } finally {
    clearInterval(heartbeat);
    options.signal.removeEventListener('abort', stopAgents);
  }
  const root = tasks.getTask(options.rootTaskId);
  return { rootHandoff: root !== null && !isOpen(root) ? root.handoff : null, released };
}

function isOpen(task: TaskRecord | null): boolean {
  return task !== null && (task.status === 'open' || task.status === 'running');
}

/** Runs the task's agent; anything it throws is colony's own failure and still ends in a handoff. */
async function execute(context: RunContext, task: TaskRecord, signal: AbortSignal): Promise<TaskExecution> {
  try {
    if (task.kind === 'planner') return await runPlannerTask(context, task, signal);
    const result = await runWorkerTask({
      repo: context.repo,
      store: context.events,
      model: context.workerModel,
      task: { id: task.id, title: task.title, body: task.body },
      runId: context.runId,
      workspacesDir: context.workspacesDir,
      maxSteps: context.workerMaxSteps,
      signal,
      parentAgentId: task.createdBy,
      attempt: task.attempt,
      ...(context.onEvent === undefined ? {} : { onEvent: context.onEvent }),
    });
    return { agentId: result.agentId, handoff: result.handoff };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      agentId: 'system',
      handoff: {
        status: 'failed',
        summary: `colony could not run this task: ${reason}`,
        commits: [],
        evidence: '',
        notes: [],
        concerns: [],
        deviations: [],
        findings: [],
        feedback: [],
        followUps: [],
        synthetic: true,
      },
    };
  }
}
