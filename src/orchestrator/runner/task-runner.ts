import { setMaxListeners } from 'node:events';
import type { RecordedEvent } from '../../events/event-types.js';
import { syntheticFailureHandoff, type Handoff } from '../../events/handoff.js';
import { isDiskFull } from '../../store/sqlite/disk-full.js';
import type { Lease, TaskKind, TaskRecord } from '../../store/tasks/task-store.js';
import { createAgentBudget, unstartedHandoff } from '../budget/agent-budget.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { createHangWatch, type Hang } from './hang-watch.js';
import type { RunContext } from '../context/run-context.js';
import { RUN_STOPPED } from '../context/run-context.js';
import { RUNNER_WAKEUP } from '../wakeups.js';
import type { TaskExecution } from '../context/task-execution.js';
import { runPlannerTask } from '../roles/planner/run-planner-task.js';
import { runWorkerTask } from '../roles/worker/run-worker-task.js';
import { priorOf, recordedHandoff } from '../resume/prior-agents.js';
import type { UserStopSwitch } from '../steering/run-controls.js';
import { isUserStop, requestedStopOf, type UserStop } from '../steering/user-stop.js';
import { releaseStoppedPlannersAndon, stoppedBeforeStart, userStoppedHandoff } from './stopped-task.js';
import { errorMessage } from '../../errors/error-message.js';

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
  /** False for a worker host: it claims workers only, and leaves planners to the run's own process. True when absent. */
  readonly plans?: boolean;
  /** Where the user's stops of single agents (`colony stop`) reach this runner; none do when absent. */
  readonly userStops?: UserStopSwitch;
}

export interface RunnerOutcome {
  /** The root task's handoff, or null when the run was stopped before it closed. */
  readonly rootHandoff: Handoff | null;
  readonly released: number;
  /** Why the runner had to stop the run itself (the store failed), or null. */
  readonly failure: string | null;
}

/** One task this runner is running: its agent's stop switch and the lease it writes under. */
interface Running {
  readonly done: Promise<void>;
  readonly stop: AbortController;
  /** Updated when this runner claims the task again after its own lease lapsed (a long stall). */
  readonly lease: { holder: string; attempt: number };
}

/**
 * Claims tasks from the store and runs each as an async agent loop in this process: planners
 * whenever there are any, workers up to `workers()` at once. Heartbeats its leases; closes each
 * task with its agent's handoff (which the store delivers to the parent's inbox); stops a worker
 * that recorded nothing for too long; starts nothing while the disk is full; returns when the
 * root task closes or the signal aborts, after every agent it started has stopped.
 */
export async function runTasks(options: TaskRunnerOptions): Promise<RunnerOutcome> {
  const { context, holder, leaseMs } = options;
  const { tasks, wakeups } = context;
  const agents = new AbortController();
  // Every running agent listens on this one signal (its model calls, commands and waits).
  setMaxListeners(0, agents.signal);
  const stopAgents = () => agents.abort(RUN_STOPPED);
  options.signal.addEventListener('abort', stopAgents, { once: true });
  const running = new Map<string, Running>();
  const hangs = createHangWatch(context.settings.hangAfterMs, context.now);
  let runningWorkers = 0;
  let released = 0;
  let failure: string | null = null;
  // The store failing under the runner (a broken file) stops the run: agents stop at their
  // next safe point and the run ends failed with the reason, rather than crashing. A full disk
  // does not: the disk guard waits it out.
  const fail = (what: string, error: unknown): void => {
    failure ??= `${what}: ${errorMessage(error)}`;
    agents.abort(RUN_STOPPED);
    wakeups.wake(RUNNER_WAKEUP);
  };
  const { record } = createAgentRecorder(context.events, context.runId, 'system', context.onEvent);

  const stopHung = (hang: Hang): void => {
    const entry = running.get(hang.taskId);
    if (entry === undefined) return;
    record({ type: 'agent.hung', data: { taskId: hang.taskId, hungAgentId: hang.agentId, silentMs: hang.silentMs, limitMs: hang.limitMs } });
    entry.stop.abort({ ...hang, explanation: `colony found it hung: it recorded nothing for ${Math.round(hang.silentMs / 1000)} s` });
  };
  // The user's stop: the agent stops at its next safe point and its task closes, failed, saying so.
  const detachStops = options.userStops?.attach((stop: UserStop) => running.get(stop.taskId)?.stop.abort({ ...stop, explanation: `the user stopped it: ${stop.reason}` }));
  // One renewal at a time, not waited for here, so the hang watch below keeps its time however
  // slow the store is; the runner waits for the last one before it returns.
  let renewal: Promise<void> = Promise.resolve();
  let renewing = false;
  const heartbeat = setInterval(() => {
    if (!renewing) {
      renewing = true;
      renewal = tasks
        .renewLeases(holder, context.now(), leaseMs)
        .then(
          () => undefined,
          (error: unknown) => {
            // While the disk is full no write succeeds; the leases are renewed once one does.
            if (!isDiskFull(error)) fail('renewing the leases failed', error);
          },
        )
        .finally(() => {
          renewing = false;
        });
    }
    // Workers waiting for the disk to take their events wait on colony, not hang.
    if (context.disk?.isFull() === true) hangs.excuseAll();
    else for (const hang of hangs.check()) stopHung(hang);
  }, Math.max(50, Math.floor(leaseMs / 3)));

  const closeTask = async (task: TaskRecord, lease: Lease, execution: TaskExecution, stoppedByRun: boolean): Promise<void> => {
    const write = <Result>(operation: () => Promise<Result>): Promise<Result | null> =>
      context.disk === undefined ? operation() : context.disk.write(operation, options.signal);
    if (stoppedByRun && execution.handoff.synthetic) {
      // Stopped, not finished: the task goes back to the store, open, for a resumed run to take.
      // An agent that handed off on its own just before the stop is delivered as usual.
      if ((await write(() => tasks.release(task.id, lease))) === true) {
        released += 1;
        record({ type: 'task.released', data: { taskId: task.id, reason: 'the run was stopped' } });
      }
      return;
    }
    const completed = await write(() => tasks.complete(task.id, lease, execution.handoff, context.now()));
    if (completed === null) return;
    if (!completed.ok) {
      // Another runner holds the task now (this lease expired): its agent will hand off instead.
      record({ type: 'task.released', data: { taskId: task.id, reason: `this runner lost the task before its handoff could be delivered: ${completed.error}` } });
      return;
    }
    record({ type: 'handoff.delivered', data: { taskId: task.id, parentTaskId: task.parentTaskId, status: execution.handoff.status } });
    await (context.disk === undefined ? context.events.flush() : context.disk.flush(options.signal));
    if (task.parentTaskId !== null) wakeups.wake(task.parentTaskId);
  };

  const finishTask = async (task: TaskRecord, lease: Lease, execution: TaskExecution, stoppedByRun: boolean): Promise<void> => {
    try {
      await closeTask(task, lease, execution, stoppedByRun);
    } catch (error) {
      fail(`closing task ${task.id} failed`, error);
    }
  };

  const finishUserStopped = async (task: TaskRecord, lease: Lease, execution: TaskExecution, stop: UserStop): Promise<void> => {
    try {
      await releaseStoppedPlannersAndon(context, task, record);
      await closeTask(task, lease, userStoppedHandoff(execution, stop, task, await tasks.listChildren(task.id)), false);
    } catch (error) {
      fail(`closing task ${task.id} after the user stopped it failed`, error);
    }
  };

  /**
   * Starts the task's agent, or closes the task at once when no agent may run it. Resolves once
   * the agent has started (a worker's workspace is being made, so the workspace quota counts it
   * before the next claim), not when it ends.
   */
  const start = async (task: TaskRecord): Promise<void> => {
    const already = running.get(task.id);
    if (already !== undefined) {
      // This runner's own lease ran out (a stalled event loop, a full disk) and it claimed the
      // task again: the agent already running it carries on under the new attempt.
      already.lease.attempt = task.attempt;
      return;
    }
    record({ type: 'task.claimed', data: { taskId: task.id, kind: task.kind, attempt: task.attempt, holder } });
    const lease = { holder, attempt: task.attempt };
    // A task whose scope's budget is used up gets no agent: it is closed at once with a handoff
    // that says so, so its planner hears of it instead of waiting.
    const exhausted = context.budget?.blocksStart(task.id) ?? null;
    if (exhausted !== null) {
      void finishTask(task, lease, { agentId: 'system', handoff: unstartedHandoff(exhausted) }, false);
      return;
    }
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    const forward = () => stop.abort(RUN_STOPPED);
    if (agents.signal.aborted) forward();
    else agents.signal.addEventListener('abort', forward, { once: true });
    if (task.kind === 'worker') {
      runningWorkers += 1;
      hangs.watch(task.id);
    }
    const watched: RunContext = {
      ...context,
      onEvent: (event: RecordedEvent) => {
        hangs.saw(task.id, event);
        context.onEvent?.(event);
      },
    };
    let started: () => void = () => undefined;
    const agentStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    // Among the running before the store is asked whether the user stopped the task earlier, so
    // a stop recorded while it answers reaches this task's switch.
    const done = runClaimed(watched, task, lease, stop.signal, started)
      .finally(() => {
        started();
        agents.signal.removeEventListener('abort', forward);
        running.delete(task.id);
        hangs.forget(task.id);
        if (task.kind === 'worker') runningWorkers -= 1;
        wakeups.wake(RUNNER_WAKEUP);
      });
    running.set(task.id, { done, stop, lease });
    await agentStarted;
  };

  /**
   * Closes a task the user stopped before it started, unrun; else runs its agent and closes it
   * with the handoff. Tells `started` once the agent has started or none will. Never rejects.
   */
  const runClaimed = async (watched: RunContext, task: TaskRecord, lease: Lease, signal: AbortSignal, started: () => void): Promise<void> => {
    let earlier: { readonly stop: UserStop; readonly execution: TaskExecution } | null;
    try {
      // Stopped by the user while the run was down (or while it waited to be taken up again): closed, not run.
      const stoppedEarlier = await requestedStopOf(tasks, context.runId, task.id);
      // An agent of an earlier life that had handed off on its own is delivered as it said.
      earlier = stoppedEarlier === null ? null : { stop: stoppedEarlier, execution: await stoppedBeforeStart(context, task) };
    } catch (error) {
      started();
      fail('claiming tasks failed', error);
      return;
    }
    if (earlier !== null) {
      started();
      await (earlier.execution.handoff.synthetic ? finishUserStopped(task, lease, earlier.execution, earlier.stop) : finishTask(task, lease, earlier.execution, false));
      return;
    }
    const execution = await execute(watched, task, () => lease, signal, started);
    const reason: unknown = signal.reason;
    // A worker that handed off before the stop came (its acceptance checks were running) is delivered as it said.
    if (isUserStop(reason) && execution.handoff.synthetic) return finishUserStopped(task, lease, execution, reason);
    const hang = hangs.hangOf(task.id);
    const stoppedByRun = signal.aborted && reason === RUN_STOPPED;
    return finishTask(task, lease, hang === null ? execution : hungHandoff(execution, hang), stoppedByRun);
  };

  const claim = async (kinds: readonly TaskKind[]): Promise<TaskRecord | null> => {
    // A stopping run claims nothing: the stop can land while the runner waits between claims
    // (for the workspace quota), and a task claimed then would only be given back at once.
    if (agents.signal.aborted) return null;
    try {
      // The user's andon as the log has it: a change made since the last look (while the runner
      // waited for the workspace quota, say) is recorded before any claim it allows, and a claim
      // made then is refused until it is, so no task.claimed lands between a hold and its release.
      const steering = context.steering;
      await steering?.recordSteering();
      const runAndonSeq = await steering?.recordedAndonSeq();
      return await tasks.claim({ runId: context.runId, holder, kinds, now: context.now(), leaseMs, ...(runAndonSeq === undefined ? {} : { runAndonSeq }) });
    } catch (error) {
      // The disk filled up between the guard's look and the claim: nothing was claimed.
      if (isDiskFull(error)) return null;
      throw error;
    }
  };

  try {
    while (!agents.signal.aborted && isOpen(await tasks.getTask(options.rootTaskId))) {
      context.budget?.tick();
      // What people asked (a new worker limit, a stop) is acted on before this round's claims.
      await context.steering?.recordSteering();
      // Nothing new starts while colony cannot write its state; what runs goes on.
      if (context.disk === undefined || (await context.disk.canStartAgents())) {
        if (options.plans !== false) for (let task = await claim(['planner']); task !== null; task = await claim(['planner'])) await start(task);
        while (runningWorkers < options.workers()) {
          // Asked before claiming: a task claimed and then held back would sit leased for nothing.
          if (context.workspaceQuota !== undefined && !(await context.workspaceQuota.admit(runningWorkers))) break;
          const task = await claim(['worker']);
          if (task === null) break;
          await start(task);
        }
      }
      await wakeups.wait(RUNNER_WAKEUP, agents.signal, CLAIM_POLL_MS);
    }
  } catch (error) {
    fail('claiming tasks failed', error);
  } finally {
    // The root closed, the run was stopped or the store failed: whatever still runs (below a
    // failed planner, say) stops too, and the runner returns only when every agent has.
    agents.abort(RUN_STOPPED);
    while (running.size > 0) await Promise.allSettled([...running.values()].map((entry) => entry.done));
    clearInterval(heartbeat);
    await renewal;
    detachStops?.();
    options.signal.removeEventListener('abort', stopAgents);
  }
  if (failure !== null) return { rootHandoff: null, released, failure };
  const root = await tasks.getTask(options.rootTaskId);
  return { rootHandoff: root !== null && !isOpen(root) ? root.handoff : null, released, failure };
}

function isOpen(task: TaskRecord | null): boolean {
  return task !== null && (task.status === 'open' || task.status === 'running');
}

/** A hung worker's handoff: it says so first, and keeps what the worker's own ending said about its work. */
function hungHandoff(execution: TaskExecution, hang: Hang): TaskExecution {
  const minutes = (ms: number) => `${Math.round(ms / 6_000) / 10} minute(s)`;
  return {
    agentId: execution.agentId,
    handoff: syntheticFailureHandoff({
      summary: `The worker hung: it recorded nothing for ${minutes(hang.silentMs)} (the limit is ${minutes(hang.limitMs)}), so colony stopped it.`,
      commits: execution.handoff.commits,
      notes: [execution.handoff.summary, ...execution.handoff.notes],
      concerns: ['Check main for any part of the task that landed before it hung, then publish the rest again.'],
    }),
  };
}

/**
 * Runs the task's agent; anything it throws is colony's own failure and still ends in a handoff.
 * Tells `started` as soon as the agent has taken its first steps (a worker's workspace is being
 * made), or once it is clear that no agent will run.
 */
async function execute(context: RunContext, task: TaskRecord, lease: () => Lease, signal: AbortSignal, started: () => void): Promise<TaskExecution> {
  try {
    const prior = await priorOf(context, task);
    // Its agent had ended and recorded its handoff; only the delivery was cut off.
    const recorded = prior === null ? null : recordedHandoff(prior);
    if (prior !== null && recorded !== null) return { agentId: prior.agentId, handoff: recorded };
    if (task.kind === 'planner') {
      const planning = runPlannerTask(context, task, signal, lease, prior);
      started();
      return await planning;
    }
    const serves = await servedBy(context, task);
    const working = runWorkerTask(context, {
      task: { id: task.id, title: task.title, body: task.body, acceptance: task.acceptance, paths: task.paths, serves },
      signal,
      parentAgentId: task.createdBy,
      attempt: task.attempt,
      budget: context.budget === undefined ? undefined : createAgentBudget(context.budget, task.id, 'worker', context.prompts),
      prior,
    });
    started();
    const result = await working;
    return { agentId: result.agentId, handoff: result.handoff };
  } catch (error) {
    const reason = errorMessage(error);
    return { agentId: 'system', handoff: syntheticFailureHandoff({ summary: `colony could not run this task: ${reason}` }) };
  } finally {
    started();
  }
}

/**
 * What a task serves, outermost first: the run's goal (the root's title), then the slice of each
 * sub-planner between the root and the task.
 */
async function servedBy(context: RunContext, task: TaskRecord): Promise<string[]> {
  const chain: string[] = [];
  const seen = new Set<string>();
  for (let id = task.parentTaskId; id !== null && !seen.has(id); ) {
    seen.add(id);
    const planner = await context.tasks.getTask(id);
    if (planner === null) break;
    chain.unshift(planner.scope === null ? `the run's goal "${planner.title}"` : `the slice \`${planner.scope}\` ("${planner.title}")`);
    id = planner.parentTaskId;
  }
  return chain;
}
