import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { EventType, RecordedEvent } from '../../events/event-types.js';
import type { ChatModel } from '../../model/chat-model.js';
import { readPriceFile } from '../../model/price-file.js';
import type { PriceTable } from '../../model/prices.js';
import { modelPrice, resolveModel } from '../../model/registry.js';
import { CLI_MODEL_FACTORIES } from '../model-factories.js';
import { formatEventLine } from '../../observe/view/format-event.js';
import type { Exhaustion } from '../../orchestrator/budget/budget-ledger.js';
import { runRunSession, type GoalGiven, type RunSessionResult } from '../../orchestrator/session/run-session.js';
import { DEFAULT_MAX_BRIEF_BYTES } from '../../orchestrator/session/brief-file.js';
import type { RunStatus } from '../../observe/status/types.js';
import { formatAmount } from '../../events/budget-figures.js';
import type { WorkspaceMethodChoice } from '../../workspace/workspace-method-choice.js';
import {
  byteSize,
  commandText,
  EXIT_FAILED,
  EXIT_OK,
  positiveInteger,
  positiveNumber,
  usageError,
  workspacesOption,
  type CommandContext,
} from '../command-context.js';
import { formatRunSummary, readRunStatus } from './run-report.js';
import { addSandboxOptions, reportSandboxSettings, type SandboxFlags } from '../sandbox-options.js';
import { addFreshnessOptions, freshnessOf, type FreshnessFlags } from '../freshness-options.js';
import { addGreenOptions, greenSettingsOf, type GreenFlags } from '../green-options.js';
import { addSetupOptions, setupOf, type SetupFlags } from '../setup-options.js';
import { simGoalProblem } from '../sim-goal.js';
import { startRunDisplay } from '../run-display.js';
import { defaultStateDir } from '../../orchestrator/setup/state-directory.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, noteStateDirInCheckout, storeOption } from '../state-dir-flags.js';
import { trunkOriginOf, type TrunkOrigin } from '../../workspace/git/trunk-origin.js';
import { runStateAt, type RunState } from '../../orchestrator/setup/run-state.js';

interface RunFlags extends SandboxFlags, FreshnessFlags, GreenFlags, SetupFlags {
  readonly repo: string;
  readonly store?: string;
  readonly origin?: string;
  readonly trunk?: string;
  readonly model: string;
  readonly plannerModel?: string;
  readonly baseUrl?: string;
  readonly apiKeyEnv?: string;
  readonly workers: number;
  readonly state?: string;
  readonly maxSteps: number;
  readonly plannerMaxSteps: number;
  readonly mergeCheck?: string;
  /** False with `--no-shared-deps`. */
  readonly sharedDeps: boolean;
  /** False with `--no-prompt-cache`. */
  readonly promptCache: boolean;
  readonly workspaces: WorkspaceMethodChoice;
  readonly workspaceDiskCap?: number;
  readonly budgetTokens?: number;
  readonly budgetUsd?: number;
  readonly maxHours?: number;
  readonly prices?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly verbose?: boolean;
  readonly new?: boolean;
  readonly hangAfter?: number;
  /** `--goal`: the goal as text, instead of a file. */
  readonly goal?: string;
  readonly maxGoalSize: number;
}

/** How much a run prints as it goes: `--json` and `--quiet` print nothing, `--verbose` every event. */
export interface ProgressFlags {
  /** False with `--no-tui`. */
  readonly tui?: boolean;
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly verbose?: boolean;
}

/** The events a progress line is printed for; `--verbose` prints every event. */
const PROGRESS_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  'run.started',
  'run.ended',
  'run.resumed',
  'trunk.rewritten',
  'disk.full',
  'disk.recovered',
  'agent.hung',
  'workspace.reopened',
  'dependencies.installing',
  'dependencies.prepared',
  'dependencies.failed',
  'dependencies.skipped',
  'workspace.method-chosen',
  'sandbox.opened',
  'workspace.swept',
  'workspace.salvaged',
  'workspace.quota-reached',
  'agent.started',
  'agent.ended',
  'agent.failed',
  'merge.landed',
  'merge.conflicted',
  'acceptance.checked',
  'handoff.delivered',
  'planner.finished',
  'andon.changed',
  'goal.changed',
  'message.sent',
  'main.checked',
  'green.checked',
  'green.advanced',
  'green.blocked',
  'green.bisected',
  'green.reported',
  'model.retried',
  'model.failed',
  'agent.parked',
  'agent.unparked',
  'provider.limited',
  'provider.circuit-opened',
  'provider.circuit-closed',
  'budget.set',
  'budget.warned',
  'budget.exhausted',
  'context.compacted',
  'context.compaction-failed',
  'workers.changed',
  'agent.stop-requested',
]);

export function defineRunCommand(command: Command, ctx: CommandContext): void {
  command
    .argument('[goal]', 'a Markdown file describing the goal (or give it inline with --goal)')
    .option('--goal <text>', 'the goal as text, instead of a file: colony keeps it in the state directory for colony resume')
    .option('--max-goal-size <size>', 'the largest goal colony reads, e.g. 64M', byteSize, DEFAULT_MAX_BRIEF_BYTES)
    .option('--repo <dir>', 'the git repository to build in', '.')
    .option('--trunk <branch>', "the branch the work lands on: an existing branch, or a new one made from the commit checked out (default: a branch of the run's own, colony/<short goal name>; your checked-out branch and files are never moved)")
    .option('--model <spec>', "the workers' model: sim[?options], openai:<model>, anthropic:<model>, openai-compatible:<model>", 'sim')
    .option('--planner-model <spec>', "the planners' model (default: the workers' model)")
    .option('--base-url <url>', 'the API base URL (required for openai-compatible)')
    .option('--api-key-env <name>', 'the environment variable holding the API key')
    .option('--workers <n>', 'the most workers running at once (planners do not count)', positiveInteger, 4)
    .option('--state <dir>', `where colony keeps its state (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--origin <url>', 'with --store: the git repository every host lands on (https://…, ssh://… or a path); the run pushes its start there and its trunk here follows it (default: this repository, for hosts on this machine)')
    .option('--max-steps <n>', 'the most model calls one worker may make', positiveInteger, 100)
    .option('--planner-max-steps <n>', 'the most model calls one planner may make', positiveInteger, 1000)
    .option('--merge-check <command>', "a command each worker's merge must pass, run in its workspace on its work replayed onto main (off by default)", commandText)
    .option('--no-shared-deps', "do not install the repository's dependencies once for all workers; each workspace starts without node_modules")
    .option('--no-prompt-cache', "do not ask the model's provider to cache agents' prompts (each call's whole input is then billed at the full price)")
    .addOption(workspacesOption())
    .option('--workspace-disk-cap <size>', 'the most disk all workspaces may take together, e.g. 2G (default: a fifth of the free space)', byteSize)
    .option('--budget-tokens <n>', 'wind the run down when its model calls have used this many tokens, input plus output', positiveInteger)
    .option('--budget-usd <amount>', 'wind the run down when its model calls have cost this many US dollars', positiveNumber('an amount of US dollars such as 5 or 0.50'))
    .option('--max-hours <h>', 'wind the run down after this many hours of wall time; fractions allowed, e.g. 0.5', positiveNumber('a number of hours such as 2 or 0.25'))
    .option('--prices <file>', 'a JSON file of model prices that adds to or overrides the known ones, like {"openai:gpt-5": {"inputPerMTok": 1.25, "outputPerMTok": 10}}')
    .option('--hang-after <minutes>', 'stop a worker that records nothing for this many minutes (at least 1; a running command gets at least 35) and close its task as failed', hangMinutes, 40)
    .option('--new', 'start a new run even though the state directory holds an unfinished one (it is recorded as abandoned; `colony resume` continues it instead)');
  addProgressOptions(command);
  addFreshnessOptions(command);
  addGreenOptions(command);
  addSetupOptions(command);
  addSandboxOptions(command).action(async (goalPath: string | undefined, _given: RunFlags, self: Command) => {
    // Flags left out come from COLONY_* variables, colony.toml and the user's file, in that order.
    const configured = applyConfiguration<RunFlags>(ctx, self);
    if (configured === null) return;
    const goal = goalOf(goalPath, configured.flags);
    if (!goal.ok) {
      usageError(ctx, goal.error, 'Give the goal one way: colony run GOAL.md, or colony run --goal "Build ...".');
      return;
    }
    ctx.exitCode = await run(configured.ctx, goal.given, configured.flags);
  });
}

/** The goal as the command was given it: a file or `--goal`, exactly one of the two. */
function goalOf(goalPath: string | undefined, flags: RunFlags): { readonly ok: true; readonly given: GoalGiven } | { readonly ok: false; readonly error: string } {
  if (goalPath !== undefined && flags.goal !== undefined) return { ok: false, error: `colony run was given both a goal file (${goalPath}) and --goal.` };
  if (goalPath !== undefined) return { ok: true, given: { goalPath } };
  if (flags.goal !== undefined) return { ok: true, given: { goalText: flags.goal } };
  return { ok: false, error: 'colony run needs a goal: a Markdown file, or the text with --goal.' };
}

/** `--hang-after`: a number of minutes, at least one, so ordinary pauses between calls never count as a hang. */
function hangMinutes(value: string): number {
  const minutes = positiveNumber('a number of minutes such as 40 or 5')(value);
  if (minutes < 1) throw new InvalidArgumentError(`--hang-after must be at least 1 minute (a pause between a worker's calls is not a hang), got ${value}.`);
  return minutes;
}

/** `--json`, `--quiet`, `--verbose`: shared by `run` and `resume`. */
export function addProgressOptions(command: Command): Command {
  return command
    .option('--json', 'print the outcome as JSON')
    .option('--quiet', 'print no progress lines')
    .option('--verbose', 'print a line for every event, not only the milestones')
    .option('--no-tui', 'print progress lines instead of the terminal UI, even in a terminal');
}

/** The progress printer for a run, or undefined when it prints none. */
export function progressPrinter(ctx: CommandContext, flags: ProgressFlags): ((event: RecordedEvent) => void) | undefined {
  if (flags.json === true || flags.quiet === true) return undefined;
  return (event) => {
    if (flags.verbose === true ? event.type !== 'model.requested' : PROGRESS_EVENTS.has(event.type)) ctx.stderr(`${formatEventLine(event)}\n`);
  };
}

function resolveOne(ctx: CommandContext, spec: string, flags: RunFlags, prices: PriceTable): ChatModel | null {
  const resolved = resolveModel(spec, {
    env: ctx.env,
    prices,
    baseUrl: flags.baseUrl,
    apiKeyEnv: flags.apiKeyEnv,
  }, CLI_MODEL_FACTORIES);
  if (resolved.ok) return resolved.model;
  usageError(ctx, resolved.error);
  return null;
}

async function run(ctx: CommandContext, given: GoalGiven, flags: RunFlags): Promise<number> {
  const goal = 'goalPath' in given ? { goalPath: resolve(ctx.cwd, given.goalPath) } : given;
  const sandbox = reportSandboxSettings(ctx, flags, resolve(ctx.cwd, flags.repo));
  if (sandbox === null) return ctx.exitCode;
  const setup = setupOf(flags);
  if (!setup.ok) {
    usageError(ctx, setup.error);
    return ctx.exitCode;
  }
  let prices: PriceTable = {};
  if (flags.prices !== undefined) {
    const read = readPriceFile(resolve(ctx.cwd, flags.prices));
    if (!read.ok) {
      usageError(ctx, read.error);
      return ctx.exitCode;
    }
    prices = read.prices;
  }
  const workerModel = resolveOne(ctx, flags.model, flags, prices);
  if (workerModel === null) return ctx.exitCode;
  const plannerModel = flags.plannerModel === undefined ? workerModel : resolveOne(ctx, flags.plannerModel, flags, prices);
  if (plannerModel === null) return ctx.exitCode;
  const simProblem = simGoalProblem(goal, [workerModel.spec, plannerModel.spec], flags.maxGoalSize);
  if (simProblem !== null) {
    usageError(ctx, simProblem.error, simProblem.hint);
    return ctx.exitCode;
  }
  if (flags.budgetUsd !== undefined) {
    // A limit in dollars means nothing for calls whose price is unknown: refuse it rather than count them as free.
    const unpriced = [...new Set([workerModel.spec, plannerModel.spec])].filter((spec) => modelPrice(spec, prices) === null);
    if (unpriced.length > 0) {
      usageError(
        ctx,
        `--budget-usd needs the price of every model the run uses, and colony does not know the price of ${unpriced.join(' or ')}.`,
        `Pass --prices FILE.json with its price in US dollars per million tokens, e.g. { "${unpriced[0]?.split('?')[0] ?? ''}": { "inputPerMTok": 1.25, "outputPerMTok": 10 } }.`,
      );
      return ctx.exitCode;
    }
  }
  const origin = originOf(ctx, flags);
  if (origin === null) return ctx.exitCode;
  const progress = progressPrinter(ctx, flags);
  const repoDir = resolve(ctx.cwd, flags.repo);
  noteStateDirInCheckout(ctx, flags);
  const state = runStateAt(flags.state === undefined ? defaultStateDir(repoDir) : resolve(ctx.cwd, flags.state), flags.store);
  const display = startRunDisplay(ctx, { tui: showsTui(ctx, flags), state, repoDir, progress });
  if (progress !== undefined && !showsTui(ctx, flags)) {
    ctx.stderr(`colony run: workers on ${workerModel.spec}, planners on ${plannerModel.spec}, up to ${flags.workers} workers at once\n`);
  }
  let result: RunSessionResult;
  try {
    result = await runRunSession({
      repoDir,
      workerModel,
      plannerModel,
      maxGoalBytes: flags.maxGoalSize,
      settings: {
        ...goal,
        trunk: flags.trunk ?? null,
        workers: flags.workers,
        workerMaxSteps: flags.maxSteps,
        plannerMaxSteps: flags.plannerMaxSteps,
        mergeCheck: flags.mergeCheck,
        sharedDependencies: flags.sharedDeps,
        setup: setup.setup === null ? null : { command: setup.setup.command, inputs: [...setup.setup.inputs] },
        promptCache: flags.promptCache,
        workspaces: flags.workspaces,
        sandbox,
        workspaceDiskCapBytes: flags.workspaceDiskCap,
        limits: { tokens: flags.budgetTokens ?? null, usd: flags.budgetUsd ?? null, maxHours: flags.maxHours ?? null },
        hangAfterMs: flags.hangAfter === undefined ? undefined : Math.round(flags.hangAfter * 60_000),
        freshness: freshnessOf(flags),
        green: greenSettingsOf(flags),
        baseUrl: flags.baseUrl,
        apiKeyEnv: flags.apiKeyEnv,
        prices,
      },
      stateDir: flags.state === undefined ? undefined : resolve(ctx.cwd, flags.state),
      storeUrl: flags.store,
      ...(origin.origin === undefined ? {} : { origin: origin.origin }),
      signal: ctx.signal,
      secrets: [...(ctx.secrets ?? []), ...origin.secrets],
      onEvent: display.onEvent,
      newRun: flags.new === true,
    });
  } finally {
    // The terminal UI comes down however the run ends, so the terminal is the user's again.
    await display.close();
  }
  return finishRun(ctx, result, flags.json === true, flags.store);
}

/** `--origin`, read; null (the usage error given) when it is wrong or has no store to go with. */
function originOf(ctx: CommandContext, flags: RunFlags): { readonly origin?: TrunkOrigin; readonly secrets: readonly string[] } | null {
  if (flags.origin === undefined) return { secrets: [] };
  if (flags.store === undefined) {
    usageError(ctx, '--origin is for a run other hosts work on, and they find it in a shared store: give --store postgres://… too.');
    return null;
  }
  const parsed = trunkOriginOf(flags.origin);
  if (parsed.ok) return parsed;
  usageError(ctx, `--origin: ${parsed.error}`);
  return null;
}

/** The terminal UI shows a run in a terminal, unless told not to or asked for JSON or quiet. */
export function showsTui(ctx: CommandContext, flags: ProgressFlags): boolean {
  return ctx.terminal !== undefined && flags.tui !== false && flags.json !== true && flags.quiet !== true;
}

/** Prints how a run (new or resumed) ended and returns the exit code; `storeUrl` is the store its log is in, if not its state directory. */
export async function finishRun(ctx: CommandContext, result: RunSessionResult, json: boolean, storeUrl?: string): Promise<number> {
  if (!result.ok && result.failed === true) {
    ctx.stderr(`colony: ${result.error}\n`);
    return EXIT_FAILED;
  }
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  await report(ctx, result, json, runStateAt(result.stateDir, storeUrl));
  return result.status === 'done' ? EXIT_OK : EXIT_FAILED;
}

async function report(ctx: CommandContext, result: Extract<RunSessionResult, { ok: true }>, json: boolean, state: RunState): Promise<void> {
  const status = await readRunStatus(state, result.runId);
  if (json) {
    const outcome = {
      runId: result.runId,
      status: result.status,
      rootHandoff: result.rootHandoff,
      check: result.check,
      main: result.mainCommit,
      checkoutProblem: result.checkoutProblem,
      trunkProblem: result.trunkProblem,
      failure: result.failure,
      budgetExhausted: result.budgetExhausted,
      durationMs: result.durationMs,
      workspaces: result.workspaceMethod,
      sandbox: result.sandboxMethod,
      summary: status,
    };
    ctx.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
    return;
  }
  ctx.stdout(formatRunSummary(result, status, state.storeUrl !== undefined));
  if (result.failure !== null) ctx.stderr(`colony: the run was stopped because ${result.failure}\n`);
  if (result.budgetExhausted !== null) ctx.stderr(`colony: ${budgetStopLine(result.budgetExhausted, status)}\n`);
  if (result.checkoutProblem !== null) ctx.stderr(`colony: your checkout was not updated: ${result.checkoutProblem}\n`);
  if (result.trunkProblem !== null) ctx.stderr(`colony: landed work is missing from ${result.mainBranch}: ${result.trunkProblem}\n`);
}

/** Which limit ended the run and the figures: `the run's token budget of 100,000 tokens was used up: 104,311 tokens spent in all`. */
function budgetStopLine(exhaustion: Exhaustion, status: RunStatus | null): string {
  const figure = status?.budget?.[exhaustion.measure] ?? null;
  const spent = figure === null ? '' : `: ${formatAmount(exhaustion.measure, figure.spent)} ${exhaustion.measure === 'time' ? 'passed' : 'spent'} in all`;
  return `${exhaustion.what}${spent}; each running agent made at most one model call past it, then handed off or was stopped.`;
}
