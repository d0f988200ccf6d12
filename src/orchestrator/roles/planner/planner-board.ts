import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { AgentOutcome } from '../../../agent/agent-loop.js';
import type { AgentRecorder } from '../../../agent/types.js';
import type { Handoff } from '../../../events/handoff.js';
import { newShortId } from '../../../events/ids.js';
import type { Lease, TaskRecord } from '../../../store/tasks/task-store.js';
import type { FinishReport, PlannerBoard, Published } from '../../../tools/planner-tools.js';
import type { TaskOverlap } from '../../../tools/task-overlap-text.js';
import { EARLIER_ATTEMPTS_HEADING, earlierAttemptsSection, type EarlierAttempt } from './handoff-message.js';
import { watchRepublishedBriefs } from './republished-briefs.js';
import { normalizeRepoPath } from '../../in-flight/path-overlap.js';
import { type ReleaseGate, type RunContext } from '../../context/run-context.js';
import { flushInBackground } from '../../agent-recorder.js';
import { RUNNER_WAKEUP } from '../../wakeups.js';
import type { ReleaseVerdict } from '../../green/types.js';
import { taskCreatedEvent } from '../../resume/task-created-event.js';
import { PUBLISH_BOUND_OPENING, RELEASE_REFUSED_OPENING, RETRY_CAP_OPENING } from '../../../protocol/message-openings.js';

const ACCEPTANCE_BRIEF = readFileSync(new URL('./acceptance-brief.md', import.meta.url), 'utf8').trim();

/** Sub-planners may delegate this deep below the root; deeper scopes would be smaller than a task. */
const MAX_PLANNER_DEPTH = 8;

export interface RecordingPlannerBoard extends PlannerBoard {
  /** The planner's latest `finish`, or null when it has not finished (or not since it replanned). */
  readonly finished: () => FinishReport | null;
  /** Called before each of the planner's model calls: the publishes of one answer are counted from here. */
  readonly startAnswer: () => void;
}

/** The fewest publishes an answer may hold, however small the worker limit. */
const MIN_PUBLISHES_PER_ANSWER = 4;
/**
 * The most tasks (create_task and delegate) a planner publishes in one answer: twice the run's
 * worker limit, at least MIN_PUBLISHES_PER_ANSWER. More would not start sooner, their briefs
 * would be written against a main that will look different when they start, and a very long
 * answer is cut off by the provider's output limit.
 */
export function publishesPerAnswer(workers: number): number {
  return Math.max(MIN_PUBLISHES_PER_ANSWER, 2 * workers);
}

/** Why a publish beyond an answer's bound is refused, and what to do with the rest. */
export function publishBoundText(bound: number): string {
  return `${PUBLISH_BOUND_OPENING} at most ${bound} tasks (create_task and delegate together) are published in one answer, twice the run's worker limit. Keep the rest in your scratchpad and publish them in a later answer, each once what it depends on has handed off.`;
}

/** Tasks one retry chain may hold (the first and its retries) before colony refuses another retry. */
export const MAX_TASK_ATTEMPTS = 6;

/** The first line colony puts above a sub-planner's brief. */
export function scopeLine(scope: string): string {
  return `Your scope: \`${scope}\` (you own this slice of the repository).`;
}

/** What a board needs of its run. */
export type BoardContext = Pick<RunContext, 'runId' | 'tasks' | 'wakeups' | 'now' | 'workInFlight' | 'green'>;

/** What a board may know beyond its task: the planner's lease, and its finish before a restart. */
export interface BoardExtras {
  /**
   * The lease the planner runs under: its publishes and andon are fenced by it, so an older
   * attempt of the planner (its lease lapsed and the task was claimed again) changes nothing.
   */
  readonly lease?: () => Lease;
  /** The planner's `finish` before a restart, when nothing was published after it. */
  readonly finished?: FinishReport | null;
  /** The most tasks it may publish in one answer (see `publishesPerAnswer`); no bound when absent. */
  readonly publishesPerAnswer?: number;
}

/** One planner's board: its tasks go into the store as its children, its andon and finish are recorded. */
export function createPlannerBoard(context: BoardContext, task: TaskRecord, agentId: string, recorder: AgentRecorder, extras: BoardExtras = {}): RecordingPlannerBoard {
  let finished: FinishReport | null = extras.finished ?? null;
  let publishedInAnswer = 0;
  const republished = watchRepublishedBriefs(context.tasks, task, briefOf);
  /** The refusal of a publish beyond the answer's bound; null while it is within. */
  const beyondBound = (): Published | null => {
    const bound = extras.publishesPerAnswer;
    if (bound === undefined || publishedInAnswer < bound) return null;
    return { ok: false, error: publishBoundText(bound) };
  };
  const publish = async (
    input: {
      kind: TaskRecord['kind'];
      title: string;
      body: string;
      scope: string | null;
      retryOf: string | null;
      paths: readonly string[];
      acceptance: readonly string[];
    },
    overlaps: readonly TaskOverlap[],
  ): Promise<Published> => {
    const created = await context.tasks.createTask(
      { id: newShortId('task'), runId: context.runId, parentTaskId: task.id, createdBy: agentId, ...input },
      context.now(),
      extras.lease?.(),
    );
    if (!created.ok) return { ok: false, error: created.error };
    publishedInAnswer += 1;
    republished.published(created.task);
    const taskId = created.task.id;
    recorder.record(taskCreatedEvent(created.task));
    // Recorded before any runner of this process can act on it (they record after it); the
    // planner goes on without waiting for the disk.
    flushInBackground(recorder);
    finished = null;
    context.wakeups.wake(RUNNER_WAKEUP);
    return { ok: true, taskId, overlaps };
  };

  return {
    finished: () => finished,
    startAnswer: () => {
      publishedInAnswer = 0;
    },
    async createTask(input) {
      const paths = checkPaths(input.paths);
      if (!paths.ok) return paths;
      const bounded = beyondBound();
      if (bounded !== null) return bounded;
      if (input.retryOf === null) {
        const repeated = await republished.refusal(input.brief);
        if (repeated !== null) return { ok: false, error: repeated };
      }
      let body = input.brief;
      if (input.retryOf !== null) {
        const attempts = await earlierAttempts(context, task, input.retryOf);
        if (!attempts.ok) return attempts;
        if (attempts.attempts.length >= MAX_TASK_ATTEMPTS) return { ok: false, error: retryCapText(attempts.attempts) };
        const section = earlierAttemptsSection(attempts.attempts);
        if (section !== '') body = `${body}\n\n${section}`;
      }
      const acceptance = (input.acceptance ?? []).map((command) => command.trim());
      if (acceptance.length > 0) body = `${body}\n\n${acceptanceSection(acceptance)}`;
      // Measured before publishing, so the new task does not meet itself.
      const overlaps = paths.paths.length === 0 ? [] : await context.workInFlight.overlapsWith(paths.paths, task.id);
      return publish({ kind: 'worker', title: input.title, body, scope: null, retryOf: input.retryOf, paths: paths.paths, acceptance }, overlaps);
    },
    async delegate(input) {
      const scope = await checkScope(context, task, input.scope);
      if (!scope.ok) return scope;
      const bounded = beyondBound();
      if (bounded !== null) return bounded;
      return publish(
        { kind: 'planner', title: input.title, body: `${scopeLine(scope.scope)}\n\n${input.brief}`, scope: scope.scope, retryOf: null, paths: [], acceptance: [] },
        [],
      );
    },
    writeScratchpad(content) {
      recorder.record({ type: 'scratchpad.written', data: { content } });
    },
    async setAndon(paused, reason) {
      // A stale attempt's andon is refused by the store and changes nothing.
      if (!(await context.tasks.setAndon(task.id, paused, context.now(), extras.lease?.()))) return;
      recorder.record({ type: 'andon.changed', data: { taskId: task.id, paused, reason } });
      if (!paused) context.wakeups.wake(RUNNER_WAKEUP);
    },
    async finish(report, signal) {
      // The run ends done only on a passing release snapshot: the root planner's done waits for it.
      if (task.parentTaskId === null && report.status === 'done' && context.green !== undefined) {
        const release = await releaseUnlessStopped(context.green, signal);
        if (release.stopped) return { ok: false, error: 'The run is stopping, so it cannot finish now; when it goes on, finish again.' };
        if (!release.passed) return { ok: false, error: release.refusal ?? `${RELEASE_REFUSED_OPENING} the release snapshot of main does not pass.` };
      }
      finished = report;
      recorder.record({ type: 'planner.finished', data: { taskId: task.id, status: report.status, summary: report.summary } });
      return { ok: true };
    },
  };
}

/**
 * The release verdict, or a stopped one as soon as the planner is stopped (`colony stop`, a
 * budget, the run ending): its finish does not wait out a check it will not use.
 */
function releaseUnlessStopped(gate: ReleaseGate, signal: AbortSignal | undefined): Promise<ReleaseVerdict> {
  const stoppedVerdict: ReleaseVerdict = { passed: false, stopped: true, check: null, refusal: null };
  if (signal === undefined) return gate.release();
  if (signal.aborted) return Promise.resolve(stoppedVerdict);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(stoppedVerdict);
    signal.addEventListener('abort', onAbort, { once: true });
    gate.release().then(
      (verdict) => {
        signal.removeEventListener('abort', onAbort);
        resolve(verdict);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** The section colony puts at the end of a worker's brief naming the commands its work must pass on main. */
export function acceptanceSection(commands: readonly string[]): string {
  const listed = commands.map((command) => `- \`${command.replace(/\n/g, ' ')}\``).join('\n');
  // A function replacement: a command's own `$&` or `$$` is text, not a pattern.
  return ACCEPTANCE_BRIEF.replace('{{commands}}', () => listed);
}

/** A worker task's brief as its planner wrote it: its body without the sections colony appended (earlier attempts, acceptance checks). */
export function briefOf(task: TaskRecord): string {
  let body = task.body;
  const acceptance = `\n\n${acceptanceSection(task.acceptance)}`;
  if (task.acceptance.length > 0 && body.endsWith(acceptance)) body = body.slice(0, -acceptance.length);
  const attempts = body.indexOf(`\n\n${EARLIER_ATTEMPTS_HEADING}\n`);
  return task.retryOf !== null && attempts !== -1 ? body.slice(0, attempts) : body;
}

/** The handoff a planner's `finish` becomes for its parent; `outcome` says how its loop ended after it. */
export function handoffFromFinish(report: FinishReport, outcome: AgentOutcome): Handoff {
  const after = outcome.status === 'failed' ? [`After it finished, it took in later messages and then stopped: ${outcome.reason}.`] : [];
  return {
    status: report.status,
    summary: report.summary,
    commits: [],
    evidence: report.evidence,
    notes: [...report.notes, ...after],
    concerns: [...report.concerns],
    deviations: [...report.deviations],
    findings: [...report.findings],
    feedback: [...report.feedback],
    followUps: [...report.followUps],
    synthetic: false,
  };
}

/**
 * Why another retry of a chain that holds MAX_TASK_ATTEMPTS tasks is refused, with what to do
 * instead for the way its last attempt ended.
 */
function retryCapText(attempts: readonly EarlierAttempt[]): string {
  const ended = attempts.map((attempt) => `${attempt.taskId} ${attempt.handoffs.at(-1)?.status ?? 'without a handoff'}`).join(', ');
  const last = attempts.at(-1)?.handoffs.at(-1) ?? null;
  const ranOut = last !== null && last.synthetic === true && /step budget|context|compact/.test(last.summary);
  const instead = ranOut
    ? 'Its last worker ran out of room: split the work into smaller tasks (without retry_of), each with a brief that says what is already on main.'
    : 'Read what its handoffs found: split the work, publish the missing prerequisite first, change the plan, or accept it as not done and say so when you finish.';
  return `${RETRY_CAP_OPENING} this task has been tried ${attempts.length} times (${ended}); colony takes no more retries of it as it is. ${instead}`;
}

type AttemptsResult = { ok: true; attempts: EarlierAttempt[] } | { ok: false; error: string };

/** The handoffs of the task being retried and of every task it retried in turn, oldest first. */
async function earlierAttempts(context: BoardContext, planner: TaskRecord, retryOf: string): Promise<AttemptsResult> {
  const attempts: EarlierAttempt[] = [];
  let id: string | null = retryOf;
  const seen = new Set<string>();
  while (id !== null && !seen.has(id)) {
    seen.add(id);
    const earlier = await context.tasks.getTask(id);
    if (earlier === null || earlier.runId !== context.runId || earlier.parentTaskId !== planner.id) {
      return { ok: false, error: `retry_of: ${id} is not one of your tasks. Pass the id from a "Created task" result, or leave retry_of out.` };
    }
    if (earlier.kind !== 'worker') {
      return { ok: false, error: `retry_of: ${id} is a delegated scope, not a worker task; delegate the scope again instead.` };
    }
    attempts.unshift({ taskId: earlier.id, handoffs: earlier.handoff === null ? [] : [earlier.handoff] });
    id = earlier.retryOf;
  }
  return { ok: true, attempts };
}

type PathsResult = { ok: true; paths: string[] } | { ok: false; error: string };

/** Declared paths in one spelling, each once; refused when one is not a path inside the repository. */
function checkPaths(requested: readonly string[]): PathsResult {
  const paths: string[] = [];
  for (const path of requested) {
    const normalized = normalizeRepoPath(path);
    if (normalized === null) {
      return {
        ok: false,
        error: `paths: ${JSON.stringify(path)} is not a file or folder inside the repository; give paths relative to its root, like src/text/pad.js or src/text/.`,
      };
    }
    if (!paths.includes(normalized)) paths.push(normalized);
  }
  return { ok: true, paths };
}

type ScopeResult = { ok: true; scope: string } | { ok: false; error: string };

async function checkScope(context: BoardContext, planner: TaskRecord, requested: string): Promise<ScopeResult> {
  const trimmed = requested.trim().replace(/^\.\/+/, '');
  const normalized = posix.normalize(trimmed).replace(/\/+$/, '');
  if (trimmed === '' || posix.isAbsolute(trimmed) || normalized === '.' || normalized === '..' || normalized.startsWith('../')) {
    return { ok: false, error: `scope ${JSON.stringify(requested)} must be a relative path inside the repository, like src/collections/.` };
  }
  // A scope is a folder; with the trailing slash, "starts with" compares whole path segments.
  const scope = `${normalized}/`;
  if (planner.scope !== null && !scope.startsWith(planner.scope)) {
    return { ok: false, error: `scope ${scope} is outside your own scope ${planner.scope}: delegate only parts of it.` };
  }
  if (planner.scope === scope) {
    return { ok: false, error: `scope ${scope} is your whole scope: publish tasks for it instead of delegating it.` };
  }
  if ((await depthOf(context, planner)) >= MAX_PLANNER_DEPTH) {
    return { ok: false, error: `sub-planners may be at most ${MAX_PLANNER_DEPTH} levels deep: publish tasks instead of delegating.` };
  }
  for (const sibling of await context.tasks.listTasks(context.runId)) {
    if (sibling.parentTaskId !== planner.id || sibling.kind !== 'planner' || sibling.scope === null) continue;
    if (sibling.status !== 'open' && sibling.status !== 'running') continue;
    if (sibling.scope.startsWith(scope) || scope.startsWith(sibling.scope)) {
      return { ok: false, error: `scope ${scope} overlaps ${sibling.scope}, which task ${sibling.id} still owns: wait for its handoff, or choose a scope that does not overlap.` };
    }
  }
  return { ok: true, scope };
}

async function depthOf(context: BoardContext, task: TaskRecord): Promise<number> {
  let depth = 0;
  let parent = task.parentTaskId;
  while (parent !== null && depth <= MAX_PLANNER_DEPTH) {
    depth += 1;
    parent = (await context.tasks.getTask(parent))?.parentTaskId ?? null;
  }
  return depth;
}
