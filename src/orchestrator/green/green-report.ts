import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { runGit } from '../../workspace/git/git.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { EventBody } from '../../events/event-types.js';
import { commitSubject } from '../../workspace/green/green-branch.js';
import type { FailureOrigin, GreenState, OpenFailure, FailureReport, Culprit } from './types.js';
import type { SnapshotCheck } from './green-snapshot.js';
import { fillPlaceholders, type PromptSet } from '../prompts/prompt-set.js';

const NO_CULPRIT: Culprit = { taskId: null, title: null, agentId: null, plannerTaskId: null };

export interface ReportContext {
  readonly runId: string;
  readonly repo: Repository;
  readonly events: EventStore;
  readonly tasks: TaskStore;
}

/**
 * The task behind `commit`, from the run's log: the merge that landed it (its commit, or the
 * first merge whose landed commit contains it, for a merge that brought several), the agent
 * that recorded that merge, and that agent's task. Nobody's when no merge of this run landed it.
 */
export async function culpritOf(context: ReportContext, commit: string): Promise<Culprit> {
  const merges = (await context.events.read({ runId: context.runId, types: ['merge.landed'] })).flatMap((event) => (event.type === 'merge.landed' ? [event] : []));
  let landing = merges.find((event) => event.data.commit === commit);
  if (landing === undefined) {
    for (const event of merges) {
      const contains = await runGit(context.repo.root, ['merge-base', '--is-ancestor', commit, event.data.commit]);
      if (contains.code !== 0) continue;
      const before = await runGit(context.repo.root, ['merge-base', '--is-ancestor', commit, event.data.mainBefore]);
      if (before.code === 0) continue;
      landing = event;
      break;
    }
  }
  if (landing === undefined) return NO_CULPRIT;
  const started = (await context.events.read({ runId: context.runId, agentId: landing.agentId, types: ['agent.started'] })).find((event) => event.type === 'agent.started');
  if (started?.type !== 'agent.started') return { ...NO_CULPRIT, agentId: landing.agentId };
  const task = await context.tasks.getTask(started.data.taskId);
  return { taskId: started.data.taskId, title: task?.title ?? started.data.title, agentId: landing.agentId, plannerTaskId: task?.parentTaskId ?? null };
}

/**
 * The planner to tell about a failure: the one that owns the culprit's task, or, when that one
 * has finished, the nearest planner above it still at work; the root planner for a failure
 * nobody's task brought. Null when no planner of the run is at work.
 */
export async function fixupRecipient(tasks: TaskStore, owner: string | null, rootTaskId: string): Promise<string | null> {
  let id: string | null = owner ?? rootTaskId;
  while (id !== null) {
    const task = await tasks.getTask(id);
    if (task === null) return null;
    if (task.kind === 'planner' && (task.status === 'open' || task.status === 'running')) return task.id;
    id = task.parentTaskId;
  }
  return null;
}

/** What telling a failure's owner takes, besides the run's log and tasks. */
export interface TellContext extends ReportContext {
  readonly rootTaskId: string;
  readonly prompts: PromptSet;
  readonly record: (body: EventBody) => void;
  readonly wakeups: { wake(key: string): void };
  readonly now: () => number;
}

/**
 * Records each origin a bisect found as `green.bisected`, keeps it among the open failures, and
 * tells the planner that owns its commit's task once per failure (a failure is its first bad
 * commit): a fix-up message in its inbox, recorded as `green.reported`. At the release the root
 * planner is not sent one: its refused finish carries every failure.
 */
export async function tellOrigins(context: TellContext, state: GreenState, snapshot: SnapshotCheck, origins: readonly FailureOrigin[], releasing: boolean): Promise<void> {
  for (const origin of origins) {
    const key = origin.firstBad ?? 'before-the-run';
    const culprit = origin.firstBad === null ? NO_CULPRIT : await culpritOf(context, origin.firstBad);
    const subject = origin.firstBad === null ? '' : await commitSubject(context.repo, origin.firstBad);
    const report: FailureReport = { origin, culprit, subject };
    const knownBefore = state.reported.has(key);
    context.record({
      type: 'green.bisected',
      data: {
        snapshot: snapshot.commit,
        good: origin.good,
        firstBad: origin.firstBad,
        subject,
        taskId: culprit.taskId,
        agentId: culprit.agentId,
        plannerTaskId: culprit.plannerTaskId,
        failures: [...origin.lines],
        checks: origin.checks,
        durationMs: Math.round(origin.durationMs),
        known: knownBefore,
      },
    });
    const open = state.open.find((failure) => failure.key === key);
    if (open !== undefined) open.lines = [...new Set([...open.lines, ...origin.lines])];
    else state.open.push({ key, lines: [...origin.lines], report });
    if (knownBefore) continue;
    state.reported.add(key);
    const recipient = await fixupRecipient(context.tasks, culprit.plannerTaskId, context.rootTaskId);
    // At the release the root planner hears of every failure in its refused finish.
    const inRefusal = releasing && recipient === context.rootTaskId;
    if (recipient !== null && !inRefusal) {
      await context.tasks.sendMessage(context.runId, recipient, fixupMessage(context.prompts, snapshot, report), context.now(), 'colony');
      context.wakeups.wake(recipient);
    }
    context.record({
      type: 'green.reported',
      data: {
        firstBad: origin.firstBad,
        taskId: culprit.taskId,
        plannerTaskId: culprit.plannerTaskId,
        recipientTaskId: recipient,
        command: snapshot.command,
        failures: [...origin.lines],
        ...(inRefusal ? { inRefusal: true } : {}),
      },
    });
  }
}

/** The fix-up message a planner gets about one distinct failure (prompts/green-fixup.md). */
export function fixupMessage(prompts: PromptSet, snapshot: SnapshotCheck, report: FailureReport): string {
  return fillPlaceholders(prompts.text('green-fixup'), {
    COMMAND: snapshot.command,
    FIRST_BAD: firstBadText(report),
    TASK: taskText(report.culprit),
    SNAPSHOT: snapshot.commit.slice(0, 12),
    GOOD: report.origin.good === null ? 'none in this run yet' : report.origin.good.slice(0, 12),
    FAILURES: bulleted(report.origin.lines),
    OUTPUT_TAIL: capped(snapshot.outputTail),
  });
}

/** The error a root planner's done `finish` gets while the release snapshot fails (prompts/release-refused.md). */
export function releaseRefusal(prompts: PromptSet, snapshot: SnapshotCheck, good: string | null, open: readonly OpenFailure[]): string {
  const culprits = open.map((failure) =>
    failure.report === null
      ? `No commit could be found for: ${failure.lines.join('; ')}.`
      : `Brought by: ${firstBadText(failure.report)}, ${taskText(failure.report.culprit)}.`,
  );
  if (open.some((failure) => failure.report?.origin.firstBad === null)) {
    culprits.push(
      'Some of this failed on main before the run started: if the check cannot pass on this machine (a tool or service it needs is missing, say), finish with another status and say why.',
    );
  }
  return fillPlaceholders(prompts.text('release-refused'), {
    COMMAND: snapshot.command,
    SNAPSHOT: snapshot.commit.slice(0, 12),
    GOOD: good === null ? 'none in this run yet' : good.slice(0, 12),
    CULPRITS: culprits.length === 0 ? 'colony could not tell which commit brought it.' : culprits.join('\n'),
    FAILURES: bulleted(snapshot.failures),
    OUTPUT_TAIL: capped(snapshot.outputTail),
  });
}

/** The error a root planner's done `finish` gets when colony could not run the release check at all (prompts/release-unchecked.md). */
export function uncheckedRefusal(prompts: PromptSet, command: string, reason: string): string {
  return fillPlaceholders(prompts.text('release-unchecked'), { COMMAND: command, REASON: reason });
}

/** An output tail as a message quotes it: its last lines, and at most this many characters of them. */
const TAIL_CHARS = 4_000;

function capped(tail: string): string {
  return tail.length <= TAIL_CHARS ? tail : `…${tail.slice(-TAIL_CHARS)}`;
}

function firstBadText(report: FailureReport): string {
  if (report.origin.firstBad === null) return 'none: main already failed so when the run started';
  return `${report.origin.firstBad.slice(0, 12)} "${report.subject}"`;
}

function taskText(culprit: Culprit): string {
  if (culprit.taskId === null) return 'no task of this run landed it';
  const merged = culprit.agentId === null ? '' : `, merged by ${culprit.agentId}`;
  const owner = culprit.plannerTaskId === null ? '' : `, published by planner task ${culprit.plannerTaskId}`;
  return `task ${culprit.taskId} "${culprit.title ?? ''}"${merged}${owner}`;
}

/** Failure lines a message lists; the rest are counted. */
const LINES_LISTED = 40;

function bulleted(lines: readonly string[]): string {
  if (lines.length === 0) return '- (the check printed no failure line; see the output tail)';
  const listed = lines.slice(0, LINES_LISTED).map((line) => `- ${line}`);
  if (lines.length > LINES_LISTED) listed.push(`- (and ${lines.length - LINES_LISTED} more)`);
  return listed.join('\n');
}
