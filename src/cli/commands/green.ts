import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ColonyEvent } from '../../events/event-types.js';
import type { EventStore } from '../../store/event-store.js';
import { greenLines } from '../../observe/format-run-status.js';
import type { GreenSnapshot } from '../../orchestrator/green-loop.js';
import { runGreenNow } from '../../orchestrator/green-now.js';
import { defaultBisectParallel } from '../../orchestrator/green-settings.js';
import { openSteering } from '../../orchestrator/steering-access.js';
import { abortableSleep } from '../../model/abortable-sleep.js';
import { EXIT_FAILED, EXIT_OK, commandText, usageError, type CommandContext } from '../command-context.js';
import { stateDirOf } from '../state-dir-flags.js';
import { readRunStatus } from './run-report.js';

interface GreenFlags {
  readonly repo: string;
  readonly state?: string;
  readonly now?: boolean;
  readonly check?: string;
  readonly tag?: boolean;
  readonly json?: boolean;
}

/** How often a request to a running run looks for its snapshot in the log. */
const POLL_MS = 250;

export function registerGreenCommand(program: Command, ctx: CommandContext): void {
  program
    .command('green')
    .description("Where the green branch is and how main's health went; with --now, a release snapshot of main now: the green branch moves to it if it passes.")
    .option('--repo <dir>', 'the repository the run works on', '.')
    .option('--state <dir>', 'the state directory (default: <repo>/.colony)')
    .option('--now', "snapshot main now: a running run's green loop takes it next; with no run going, it is taken here")
    .option('--check <command>', "with --now and no run going: the check to run (default: the last run's)", commandText)
    .option('--tag', 'with --now and no run going: tag the commit if the green branch moves to it')
    .option('--json', 'print the outcome as JSON')
    .action(async (flags: GreenFlags) => {
      ctx.exitCode = await green(ctx, flags);
    });
}

async function green(ctx: CommandContext, flags: GreenFlags): Promise<number> {
  const stateDir = stateDirOf(ctx, flags);
  if (flags.now !== true) {
    if (flags.check !== undefined || flags.tag === true) {
      usageError(ctx, '--check and --tag go with --now: colony green --now --check "npm test" --tag.');
      return ctx.exitCode;
    }
    return showGreen(ctx, stateDir, flags);
  }
  const access = openSteering(stateDir, ctx.secrets ?? []);
  if (access.ok && access.live) {
    if (flags.check !== undefined || flags.tag === true) {
      access.close();
      usageError(ctx, `run ${access.run.runId} is going: its green loop takes the snapshot with the run's own check and tags, so --check and --tag do not apply. Leave them out.`);
      return ctx.exitCode;
    }
    try {
      return await askRunningRun(ctx, access, flags);
    } finally {
      access.close();
    }
  }
  if (access.ok) access.close();
  const result = await runGreenNow({
    repoDir: resolve(ctx.cwd, flags.repo),
    ...(flags.state === undefined ? {} : { stateDir }),
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
  const { snapshot } = result;
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId: result.runId, live: false, ...snapshotJson(snapshot), branch: result.branch, green: result.green }, null, 2)}\n`);
  } else {
    ctx.stdout(describeSnapshot(snapshot, result.branch, result.green));
  }
  return snapshot === null || snapshot.check.passed ? EXIT_OK : EXIT_FAILED;
}

function showGreen(ctx: CommandContext, stateDir: string, flags: GreenFlags): number {
  const found = readRunStatus(stateDir, undefined);
  if (found === null) {
    usageError(ctx, `there is no run in ${stateDir}.`, 'Pass the repository a run used with --repo, or its state directory with --state; start one with colony run.');
    return ctx.exitCode;
  }
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId: found.run.id, green: found.green }, null, 2)}\n`);
    return EXIT_OK;
  }
  const lines = greenLines(found);
  ctx.stdout(lines.length === 0 ? `Run ${found.run.id} has no green loop record.\n` : `${lines.join('\n')}\n`);
  return EXIT_OK;
}

/** Asks the running run for a snapshot and waits until its green loop has taken it. */
async function askRunningRun(ctx: CommandContext, access: Extract<ReturnType<typeof openSteering>, { ok: true }>, flags: GreenFlags): Promise<number> {
  const { events, tasks } = access.stores;
  const runId = access.run.runId;
  const from = events.lastSeq();
  const request = tasks.requestGreen(runId, 'asked with colony green --now', Date.now());
  const checked = await requestedSnapshot(ctx, events, runId, from, request.seq);
  if (checked === 'ended') {
    usageError(ctx, `run ${runId} ended before its green loop took the snapshot. Ask again with colony green --now: with no run going, it is taken here.`);
    return ctx.exitCode;
  }
  if (checked === null) return EXIT_FAILED;
  const { data } = checked;
  if (flags.json === true) {
    ctx.stdout(`${JSON.stringify({ runId, live: true, commit: data.commit, command: data.command, passed: data.passed, failures: data.failures, culprits: [] }, null, 2)}\n`);
  } else if (data.passed) {
    ctx.stdout(`main at ${data.commit.slice(0, 12)} passes \`${data.command}\`: run ${runId} moves its green branch there.\n`);
  } else {
    ctx.stdout(
      [
        `main at ${data.commit.slice(0, 12)} fails \`${data.command}\`:`,
        ...data.failures.map((line) => `  ${line}`),
        `Run ${runId} bisects new failures and tells the planners that own them; follow with colony events --type green.bisected,green.reported.`,
        '',
      ].join('\n'),
    );
  }
  return data.passed ? EXIT_OK : EXIT_FAILED;
}

type GreenChecked = Extract<ColonyEvent, { type: 'green.checked' }>;

/** The snapshot the run took for request `requestSeq` (recorded after `from`); `ended` when the run ended first, null when interrupted. */
async function requestedSnapshot(ctx: CommandContext, events: EventStore, runId: string, from: number, requestSeq: number): Promise<GreenChecked | 'ended' | null> {
  let requestedAt: number | null = null;
  while (!ctx.signal.aborted) {
    for (const event of events.read({ runId, afterSeq: from, types: ['green.requested', 'green.checked', 'run.ended'] })) {
      if (event.type === 'green.requested' && event.data.requestSeq === requestSeq) requestedAt = event.seq;
      else if (event.type === 'green.checked' && requestedAt !== null && event.seq > requestedAt && event.data.trigger === 'request') return event;
      else if (event.type === 'run.ended') return 'ended';
    }
    await abortableSleep(POLL_MS, ctx.signal);
  }
  return null;
}

function snapshotJson(snapshot: GreenSnapshot | null): object {
  if (snapshot === null) return { commit: null, command: null, passed: null, failures: [], culprits: [] };
  const { check, open } = snapshot;
  const culprits = open.map((failure) => ({
    firstBad: failure.report.origin.firstBad,
    subject: failure.report.subject,
    taskId: failure.report.culprit.taskId,
    plannerTaskId: failure.report.culprit.plannerTaskId,
    failures: failure.lines,
  }));
  return { commit: check.commit, command: check.command, passed: check.passed, failures: check.failures, culprits };
}

function describeSnapshot(snapshot: GreenSnapshot | null, branch: string, green: string | null): string {
  if (snapshot === null) {
    return 'colony knows no check for this project: give one with --check "<command>" (or a test script in package.json, a test target in a Makefile).\n';
  }
  const { check, open } = snapshot;
  const seconds = (check.durationMs / 1000).toFixed(1);
  if (check.passed) return `main at ${check.commit.slice(0, 12)} passes \`${check.command}\` (${seconds} s): ${branch} is at ${green?.slice(0, 12) ?? 'nothing'}.\n`;
  const lines = [`main at ${check.commit.slice(0, 12)} fails \`${check.command}\` (${seconds} s):`, ...check.failures.map((line) => `  ${line}`)];
  for (const failure of open) {
    const { origin, culprit, subject } = failure.report;
    const where = origin.firstBad === null ? 'already failing when the run started' : `${origin.firstBad.slice(0, 12)} "${subject}"`;
    const task = culprit.taskId === null ? '' : ` from task ${culprit.taskId} "${culprit.title ?? ''}"${culprit.plannerTaskId === null ? '' : ` (planner task ${culprit.plannerTaskId})`}`;
    lines.push(`Brought by ${where}${task}: ${failure.lines.join('; ')}`);
  }
  lines.push(`${branch} stays at ${green?.slice(0, 12) ?? 'nothing (it does not exist yet)'}.`, '');
  return lines.join('\n');
}
