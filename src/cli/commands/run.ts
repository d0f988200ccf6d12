import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ColonyEvent, EventType } from '../../events/event-types.js';
import type { ChatModel } from '../../model/chat-model.js';
import { resolveModel } from '../../model/registry.js';
import { formatEventLine } from '../../observe/format-event.js';
import { runRunSession, type RunSessionResult } from '../../orchestrator/run-session.js';
import type { WorkspaceMethodChoice } from '../../workspace/choose-workspace-provider.js';
import { byteSize, commandText, EXIT_FAILED, EXIT_OK, positiveInteger, usageError, workspacesOption, type CommandContext } from '../command-context.js';
import { formatRunSummary, readRunStatus } from './run-report.js';

interface RunFlags {
  readonly repo: string;
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
  readonly workspaces: WorkspaceMethodChoice;
  readonly workspaceDiskCap?: number;
  readonly json?: boolean;
  readonly quiet?: boolean;
  readonly verbose?: boolean;
}

/** The events a progress line is printed for; `--verbose` prints every event. */
const PROGRESS_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  'run.started',
  'run.ended',
  'dependencies.prepared',
  'dependencies.skipped',
  'workspace.method-chosen',
  'workspace.swept',
  'workspace.salvaged',
  'workspace.quota-reached',
  'agent.started',
  'agent.ended',
  'agent.failed',
  'merge.landed',
  'merge.conflicted',
  'handoff.delivered',
  'planner.finished',
  'andon.changed',
  'main.checked',
  'model.retried',
  'model.failed',
]);

export function registerRunCommand(program: Command, ctx: CommandContext): void {
  program
    .command('run')
    .description('Build a goal with a tree of agents: a root planner, sub-planners and workers that merge into main.')
    .argument('<goal>', 'a Markdown file describing the goal')
    .option('--repo <dir>', 'the git repository to build in', '.')
    .option('--model <spec>', "the workers' model: sim[?options], openai:<model>, anthropic:<model>, openai-compatible:<model>", 'sim')
    .option('--planner-model <spec>', "the planners' model (default: the workers' model)")
    .option('--base-url <url>', 'the API base URL (required for openai-compatible)')
    .option('--api-key-env <name>', 'the environment variable holding the API key')
    .option('--workers <n>', 'the most workers running at once (planners do not count)', positiveInteger, 4)
    .option('--state <dir>', 'where colony keeps its state (default: <repo>/.colony)')
    .option('--max-steps <n>', 'the most model calls one worker may make', positiveInteger, 100)
    .option('--planner-max-steps <n>', 'the most model calls one planner may make', positiveInteger, 1000)
    .option('--merge-check <command>', "a command each worker's merge must pass, run in its workspace on its work replayed onto main (off by default)", commandText)
    .option('--no-shared-deps', "do not install the repository's npm dependencies once for all workers; each workspace starts without node_modules")
    .addOption(workspacesOption())
    .option('--workspace-disk-cap <size>', 'the most disk all workspaces may take together, e.g. 2G (default: a fifth of the free space)', byteSize)
    .option('--json', 'print the outcome as JSON')
    .option('--quiet', 'print no progress lines')
    .option('--verbose', 'print a line for every event, not only the milestones')
    .action(async (goalPath: string, flags: RunFlags) => {
      ctx.exitCode = await run(ctx, goalPath, flags);
    });
}

function resolveOne(ctx: CommandContext, spec: string, flags: RunFlags): ChatModel | null {
  const resolved = resolveModel(spec, {
    env: ctx.env,
    ...(flags.baseUrl === undefined ? {} : { baseUrl: flags.baseUrl }),
    ...(flags.apiKeyEnv === undefined ? {} : { apiKeyEnv: flags.apiKeyEnv }),
  });
  if (resolved.ok) return resolved.model;
  usageError(ctx, resolved.error);
  return null;
}

async function run(ctx: CommandContext, goalPath: string, flags: RunFlags): Promise<number> {
  const workerModel = resolveOne(ctx, flags.model, flags);
  if (workerModel === null) return ctx.exitCode;
  const plannerModel = flags.plannerModel === undefined ? workerModel : resolveOne(ctx, flags.plannerModel, flags);
  if (plannerModel === null) return ctx.exitCode;
  const showProgress = flags.json !== true && flags.quiet !== true;
  const progress = (event: ColonyEvent) => {
    if (flags.verbose === true ? event.type !== 'model.requested' : PROGRESS_EVENTS.has(event.type)) ctx.stderr(`${formatEventLine(event)}\n`);
  };
  if (showProgress) {
    ctx.stderr(`colony run: workers on ${workerModel.spec}, planners on ${plannerModel.spec}, up to ${flags.workers} workers at once\n`);
  }
  const result = await runRunSession({
    repoDir: resolve(ctx.cwd, flags.repo),
    goalPath: resolve(ctx.cwd, goalPath),
    workerModel,
    plannerModel,
    workers: flags.workers,
    ...(flags.state === undefined ? {} : { stateDir: resolve(ctx.cwd, flags.state) }),
    workerMaxSteps: flags.maxSteps,
    plannerMaxSteps: flags.plannerMaxSteps,
    ...(flags.mergeCheck === undefined ? {} : { mergeCheck: flags.mergeCheck }),
    sharedDependencies: flags.sharedDeps,
    workspaces: flags.workspaces,
    ...(flags.workspaceDiskCap === undefined ? {} : { workspaceDiskCapBytes: flags.workspaceDiskCap }),
    signal: ctx.signal,
    secrets: ctx.secrets ?? [],
    ...(showProgress ? { onEvent: progress } : {}),
  });
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  report(ctx, result, flags.json === true);
  return result.status === 'done' ? EXIT_OK : EXIT_FAILED;
}

function report(ctx: CommandContext, result: Extract<RunSessionResult, { ok: true }>, json: boolean): void {
  const status = readRunStatus(result.stateDir, result.runId);
  if (json) {
    const outcome = {
      runId: result.runId,
      status: result.status,
      rootHandoff: result.rootHandoff,
      check: result.check,
      main: result.trunkCommit,
      checkoutProblem: result.checkoutProblem,
      failure: result.failure,
      durationMs: result.durationMs,
      workspaces: result.workspaceMethod,
      summary: status,
    };
    ctx.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
    return;
  }
  ctx.stdout(formatRunSummary(result, status));
  if (result.failure !== null) ctx.stderr(`colony: the run was stopped because ${result.failure}\n`);
  if (result.checkoutProblem !== null) ctx.stderr(`colony: your checkout was not updated: ${result.checkoutProblem}\n`);
}
