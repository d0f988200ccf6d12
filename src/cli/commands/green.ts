import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ColonyEvent } from '../../events/event-types.js';
import { abortableSleep } from '../../model/resilience/abortable-sleep.js';
import { greenLines } from '../../observe/status/format-run-status.js';
import { CHECK_COULD_NOT_RUN, NO_CHECK_KNOWN } from '../../orchestrator/green/green-loop.js';
import { type SnapshotOutcome } from '../../orchestrator/green/types.js';
import { runGreenNow } from '../../orchestrator/session/green-now.js';
import { defaultBisectParallel } from '../../orchestrator/green/green-settings.js';
import { describeRunState, storeLockIsFree, type RunState } from '../../orchestrator/setup/run-state.js';
import { openSteering, type SteeringAccess } from '../../orchestrator/session/steering-access.js';
import type { EventStore } from '../../store/events/event-store.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, commandText, usageError, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, runStateOf, storeOption } from '../state-dir-flags.js';
import { readRunStatus } from './run-report.js';

interface GreenFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly now?: boolean;
  readonly check?: string;
  readonly tag?: boolean;
  readonly json?: boolean;
}

/** How often a request to a running run looks for its answer in the log. */
const POLL_MS = 250;
/** How often it makes sure a run is still going to answer it. */
const LIVENESS_MS = 2_000;

export function defineGreenCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', `the state directory (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--now', "snapshot main now: a running run's green loop takes it next; once the last run has ended, it is taken here, in that run's log")
    .option('--check <command>', "with --now and the last run ended: the check to run (default: that run's)", commandText)
    .option('--tag', 'with --now and the last run ended: tag the commit if the green branch moves to it')
    .option('--json', 'print the outcome as JSON')
    .action(async (_given: GreenFlags, self: Command) => {
      const configured = applyConfiguration<GreenFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await green(configured.ctx, configured.flags);
    });
}

async function green(ctx: CommandContext, flags: GreenFlags): Promise<number> {
  const state = runStateOf(ctx, flags);
  if (flags.now !== true) {
    if (flags.check !== undefined || flags.tag === true) {
      usageError(ctx, '--check and --tag go with --now: colony green --now --check "npm test" --tag.');
      return ctx.exitCode;
    }
    return showGreen(ctx, state, flags);
  }
  const access = await openSteering(state, ctx.secrets ?? []);
  if (access.ok && access.live) {
    try {
      if (flags.check !== undefined || flags.tag === true) {
        usageError(ctx, `run ${access.run.runId} is going: its green loop takes the snapshot with the run's own check and tags, so --check and --tag do not apply. Leave them out.`);
        return ctx.exitCode;
      }
      return await askRunningRun(ctx, access, state, flags);
    } finally {
      await access.close();
    }
  }
  if (access.ok) await access.close();
  const result = await runGreenNow({
    repoDir: resolve(ctx.cwd, flags.repo),
    ...(flags.state === undefined ? {} : { stateDir: state.stateDir }),
    ...(state.storeUrl === undefined ? {} : { storeUrl: state.storeUrl }),
    ...(flags.check === undefined ? {} : { check: flags.check }),
    tag: flags.tag === true,
    secrets: ctx.secrets ?? [],
    bisectParallel: defaultBisectParallel(),
    signal: ctx.signal,
  });
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  return reportOutcome(ctx, flags, result.runId, result.outcome, result.branch, result.green);
}

async function showGreen(ctx: CommandContext, state: RunState, flags: GreenFlags): Promise<number> {
  const found = await readRunStatus(state, undefined);
  if (found === null) {
    usageError(ctx, `there is no run in ${describeRunState(state)}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start one with colony run.');
    return ctx.exitCode;
  }
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId: found.run.id, green: found.green }, null, 2)}\n`);
    return EXIT_OK;
  }
  const lines = greenLines(found);
  ctx.stdout(lines.length === 0 ? `Run ${found.run.id} recorded no green snapshot.\n` : `${lines.join('\n')}\n`);
  return EXIT_OK;
}

/** What `--now` prints for a snapshot taken here, and its exit code: 0 on a pass, 1 on a failure, 2 when colony knows no check. */
function reportOutcome(ctx: CommandContext, flags: GreenFlags, runId: string, outcome: SnapshotOutcome, branch: string, greenAt: string | null): number {
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId, live: false, ...outcomeJson(outcome), branch, green: greenAt }, null, 2)}\n`);
  } else {
    ctx.stdout(describeOutcome(outcome, branch, greenAt));
  }
  if (outcome.kind === 'checked') return outcome.snapshot.check.passed ? EXIT_OK : EXIT_FAILED;
  return outcome.kind === 'no-command' ? EXIT_USAGE : EXIT_FAILED;
}

type LiveAccess = Extract<SteeringAccess, { ok: true }>;
type Answer =
  | { readonly kind: 'checked'; readonly event: Extract<ColonyEvent, { type: 'green.checked' }> }
  | { readonly kind: 'blocked'; readonly reason: string }
  | { readonly kind: 'gone'; readonly why: string };

/** Asks the running run for a snapshot and waits for its green loop's answer. */
async function askRunningRun(ctx: CommandContext, access: LiveAccess, state: RunState, flags: GreenFlags): Promise<number> {
  const { events, tasks } = access.stores;
  const runId = access.run.runId;
  const request = await tasks.requestGreen(runId, 'asked with colony green --now', Date.now());
  const answer = await awaitAnswer(ctx, events, runId, request.seq, state);
  if (answer === null) return EXIT_FAILED;
  if (answer.kind === 'gone') {
    ctx.stderr(`colony: ${answer.why} Ask again with colony green --now: once the run has ended, the snapshot is taken here.\n`);
    return EXIT_FAILED;
  }
  if (answer.kind === 'blocked') {
    if (flags.json === true) ctx.stdout(`${JSON.stringify({ runId, live: true, commit: null, command: null, passed: null, failures: [], why: answer.reason }, null, 2)}\n`);
    else ctx.stdout(`Run ${runId} took no snapshot: ${answer.reason}.\n`);
    return EXIT_FAILED;
  }
  const { data } = answer.event;
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId, live: true, commit: data.commit, command: data.command, passed: data.passed, failures: data.failures }, null, 2)}\n`);
  } else if (data.passed) {
    ctx.stdout(`main at ${data.commit.slice(0, 12)} passes \`${data.command}\`: run ${runId} moves its green branch there.\n`);
  } else {
    const follow = 'Run it bisects new failures and tells the planners that own them; follow with colony events --type green.bisected,green.reported.';
    ctx.stdout([`main at ${data.commit.slice(0, 12)} fails \`${data.command}\`:`, ...data.failures.map((line) => `  ${line}`), follow.replace('Run it', `Run ${runId}`), ''].join('\n'));
  }
  return data.passed ? EXIT_OK : EXIT_FAILED;
}

/**
 * The run's answer to request `requestSeq`: the first snapshot it took after recording the
 * request (the one asked for, or the release, which is as new), or why it took none. A run that
 * ends, or whose process is gone (its run lock is free), answers nothing. Null when interrupted.
 */
async function awaitAnswer(ctx: CommandContext, events: EventStore, runId: string, requestSeq: number, state: RunState): Promise<Answer | null> {
  let lastLivenessCheck = Date.now();
  while (!ctx.signal.aborted) {
    let requestedAt: number | null = null;
    for (const event of await events.read({ runId, types: ['green.requested', 'green.checked', 'green.blocked', 'run.ended'] })) {
      if (event.type === 'green.requested' && event.data.requestSeq === requestSeq) requestedAt = event.seq;
      else if (requestedAt === null || event.seq < requestedAt) continue;
      else if (event.type === 'green.checked' && (event.data.trigger === 'request' || event.data.trigger === 'release')) return { kind: 'checked', event };
      else if (event.type === 'green.blocked' && answersRequest(event.data.reason)) return { kind: 'blocked', reason: event.data.reason };
      if (event.type === 'run.ended') return { kind: 'gone', why: `run ${runId} ended before its green loop took the snapshot.` };
    }
    if (Date.now() - lastLivenessCheck >= LIVENESS_MS) {
      lastLivenessCheck = Date.now();
      // The run lock is free: no process runs the run any more (it was killed), so nobody will answer.
      if (await storeLockIsFree(state)) {
        return { kind: 'gone', why: `run ${runId} is no longer running (its process is gone), so its green loop will not take the snapshot.` };
      }
    }
    await abortableSleep(POLL_MS, ctx.signal);
  }
  return null;
}

/** A `green.blocked` that says why a snapshot was not taken, as the loop answers a request (not a branch or a bisect it could not do). */
function answersRequest(reason: string): boolean {
  return reason === NO_CHECK_KNOWN || reason.startsWith(CHECK_COULD_NOT_RUN);
}

function outcomeJson(outcome: SnapshotOutcome): object {
  if (outcome.kind === 'no-command') return { commit: outcome.commit, command: null, passed: null, failures: [], culprits: [], why: 'no check command is known' };
  if (outcome.kind === 'could-not-check') return { commit: outcome.commit, command: outcome.command, passed: null, failures: [], culprits: [], why: outcome.reason };
  if (outcome.kind === 'stopped') return { commit: null, command: null, passed: null, failures: [], culprits: [], why: 'interrupted' };
  const { check, open } = outcome.snapshot;
  const culprits = open.map((failure) => ({
    firstBad: failure.report?.origin.firstBad ?? null,
    subject: failure.report?.subject ?? null,
    taskId: failure.report?.culprit.taskId ?? null,
    plannerTaskId: failure.report?.culprit.plannerTaskId ?? null,
    failures: failure.lines,
  }));
  return { commit: check.commit, command: check.command, passed: check.passed, failures: check.failures, culprits };
}

function describeOutcome(outcome: SnapshotOutcome, branch: string, greenAt: string | null): string {
  if (outcome.kind === 'no-command') {
    return 'colony knows no check for this project: give one with --check "<command>" (or give the project a test script in package.json, a test target in a Makefile).\n';
  }
  if (outcome.kind === 'could-not-check') return `colony could not run \`${outcome.command}\` on ${outcome.commit.slice(0, 12)}: ${outcome.reason}\n`;
  if (outcome.kind === 'stopped') return 'Interrupted before the check finished; nothing was recorded.\n';
  const { check, open } = outcome.snapshot;
  const seconds = (check.durationMs / 1000).toFixed(1);
  if (check.passed) return `main at ${check.commit.slice(0, 12)} passes \`${check.command}\` (${seconds} s): ${branch} is at ${greenAt?.slice(0, 12) ?? 'nothing'}.\n`;
  const lines = [`main at ${check.commit.slice(0, 12)} fails \`${check.command}\` (${seconds} s):`, ...check.failures.map((line) => `  ${line}`)];
  for (const failure of open) {
    if (failure.report === null) {
      lines.push(`No commit could be found for: ${failure.lines.join('; ')}`);
      continue;
    }
    const { origin, culprit, subject } = failure.report;
    const where = origin.firstBad === null ? 'already failing when the run started' : `${origin.firstBad.slice(0, 12)} "${subject}"`;
    const task = culprit.taskId === null ? '' : ` from task ${culprit.taskId} "${culprit.title ?? ''}"${culprit.plannerTaskId === null ? '' : ` (planner task ${culprit.plannerTaskId})`}`;
    lines.push(`Brought by ${where}${task}: ${failure.lines.join('; ')}`);
  }
  lines.push(`${branch} stays at ${greenAt?.slice(0, 12) ?? 'nothing (it does not exist yet)'}.`, '');
  return lines.join('\n');
}
