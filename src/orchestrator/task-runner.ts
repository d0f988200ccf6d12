import { setMaxListeners } from 'node:events';
import { syntheticFailureHandoff, type Handoff } from '../events/handoff.js';
import type { Lease, TaskKind, TaskRecord } from '../store/task-store.js';
import { createAgentBudget, unstartedHandoff } from './agent-budget.js';
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
  /** Why the runner had to stop the run itself (the store failed), or null. */
  readonly failure: string | null;
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
  // The generation this runner holds each task at: its latest claim of it, which is what the
  // store accepts the handoff from.
  const leases = new Map<string, Lease>();
  let runningWorkers = 0;
  let released = 0;
  let failure: string | null = null;
  // The store failing under the runner (a full disk, a broken file) stops the run: agents stop
  // at their next safe point and the run ends failed with the reason, rather than crashing.
  const fail = (what: string, error: unknown): void => {
    failure ??= `${what}: ${error instanceof Error ? error.message : String(error)}`;
    agents.abort();
    wakeups.wake(RUNNER_WAKEUP);
  };
  const heartbeat = setInterval(() => {
    try {
      tasks.renewLeases(holder, context.now(), leaseMs);
    } catch (error) {
      fail('renewing the leases failed', error);
    }
  }, Math.max(50, Math.floor(leaseMs / 3)));

  const { record } = createAgentRecorder(context.events, context.runId, 'system', context.onEvent);

  const finishTask = (task: TaskRecord, execution: TaskExecution): void => {
    try {
      closeTask(task, execution);
    } catch (error) {
      fail(`closing task ${task.id} failed`, error);
    }
  };

  const closeTask = (task: TaskRecord, execution: TaskExecution): void => {
    if (agents.signal.aborted && execution.handoff.synthetic) {
      // Stopped, not finished: the task goes back to the store, open, for a resumed run to take.
      // An agent that handed off on its own just before the stop is delivered as usual.
      if (tasks.release(task.id, leaseOf(task))) {
        released += 1;
        record({ type: 'task.released', data: { taskId: task.id, reason: 'the run was stopped' } });
      }
      return;
    }
    const completed = tasks.complete(task.id, leaseOf(task), execution.handoff, context.now());
    if (!completed.ok) {
      // Another runner holds the task now (this lease expired): its agent will hand off instead.
      record({ type: 'task.released', data: { taskId: task.id, reason: `this runner lost the task before its handoff could be delivered: ${completed.reason}` } });
      return;
    }
    record({ type: 'handoff.delivered', data: { taskId: task.id, parentTaskId: task.parentTaskId, status: execution.handoff.status } });
    context.events.flush();
    if (task.parentTaskId !== null) wakeups.wake(task.parentTaskId);
  };

  const leaseOf = (task: TaskRecord): Lease => leases.get(task.id) ?? { holder, attempt: task.attempt };

  const start = (task: TaskRecord): void => {
    leases.set(task.id, { holder, attempt: task.attempt });
    // This runner's own lease ran out (a stalled event loop) and it claimed the task again:
    // the agent already running it carries on under the new claim's generation.
    if (running.has(task.id)) return;
    record({ type: 'task.claimed', data: { taskId: task.id, kind: task.kind, attempt: task.attempt, holder } });
    // A task whose scope's budget is used up gets no agent: it is closed at once with a handoff
    // that says so, so its planner hears of it instead of waiting.
    const exhausted = context.budget?.blocksStart(task.id) ?? null;
    if (exhausted !== null) {
      finishTask(task, { agentId: 'system', handoff: unstartedHandoff(exhausted) });
      leases.delete(task.id);
      return;
    }
    if (task.kind === 'worker') runningWorkers += 1;
    const run = execute(context, task, agents.signal)
      .then((execution) => finishTask(task, execution))
      .finally(() => {
        running.delete(task.id);
        leases.delete(task.id);
        if (task.kind === 'worker') runningWorkers -= 1;
        wakeups.wake(RUNNER_WAKEUP);
      });
    running.set(task.id, run);
  };

  const claim = (kinds: readonly TaskKind[]): TaskRecord | null =>
    tasks.claim({ runId: context.runId, holder, kinds, now: context.now(), leaseMs });

  try {
    while (!agents.signal.aborted && isOpen(tasks.getTask(options.rootTaskId))) {
      context.budget?.tick();
      for (let task = claim(['planner']); task !== null; task = claim(['planner'])) start(task);
      while (runningWorkers < options.workers()) {
        // Asked before claiming: a task claimed and then held back would sit leased for nothing.
        if (context.workspaceQuota !== undefined && !(await context.workspaceQuota.admit(runningWorkers))) break;
        const task = claim(['worker']);
        if (task === null) break;
        start(task);
      }
      await wakeups.wait(RUNNER_WAKEUP, agents.signal, CLAIM_POLL_MS);
    }
  } catch (error) {
    fail('claiming tasks failed', error);
  } finally {
    // The root closed, the run was stopped or the store failed: whatever still runs (below a
    // failed planner, say) stops too, and the runner returns only when every agent has.
    agents.abort();
    while (running.size > 0) await Promise.allSettled([...running.values()]);
    clearInterval(heartbeat);
    options.signal.removeEventListener('abort', stopAgents);
  }
  if (failure !== null) return { rootHandoff: null, released, failure };
  const root = tasks.getTask(options.rootTaskId);
  return { rootHandoff: root !== null && !isOpen(root) ? root.handoff : null, released, failure };
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
      workspaces: context.workspaces,
      workspacesDir: context.workspacesDir,
      dependencyLayer: context.dependencyLayer ?? null,
      ...(context.sharedLayers === undefined ? {} : { sharedLayers: context.sharedLayers }),
      maxSteps: context.workerMaxSteps,
      commands: context.commands,
      signal,
      ...(context.mergeCheck === null ? {} : { mergeCheck: context.mergeCheck }),
      parentAgentId: task.createdBy,
      attempt: task.attempt,
      ...(context.onEvent === undefined ? {} : { onEvent: context.onEvent }),
      ...(context.budget === undefined ? {} : { budget: createAgentBudget(context.budget, task.id, 'worker') }),
    });
    return { agentId: result.agentId, handoff: result.handoff };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { agentId: 'system', handoff: syntheticFailureHandoff({ summary: `colony could not run this task: ${reason}` }) };
  }
}
