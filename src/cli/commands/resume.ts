import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ChatModel } from '../../model/chat-model.js';
import type { RunSettings } from '../../events/run-settings.js';
import { resolveModel } from '../../model/registry.js';
import { CLI_MODEL_FACTORIES } from '../model-factories.js';
import { readUnfinishedRun, runResumeSession, type ResumableRun } from '../../orchestrator/session/resume-session.js';
import type { RunSessionResult } from '../../orchestrator/session/run-session.js';
import { describeUnfinishedRun } from '../../orchestrator/setup/run-history.js';
import { openTaskTableToRead, runStateAt, type RunState } from '../../orchestrator/setup/run-state.js';
import { usageError, type CommandContext } from '../command-context.js';
import { sandboxWarning } from '../sandbox-options.js';
import { startRunDisplay } from '../run-display.js';
import { addProgressOptions, finishRun, progressPrinter, showsTui, type ProgressFlags } from './run.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { DEFAULT_STATE_DIR_HELP, noteStateDirInCheckout, storeOption } from '../state-dir-flags.js';
import { trunkOriginOf } from '../../workspace/git/trunk-origin.js';

interface ResumeFlags extends ProgressFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly origin?: string;
}

export function defineResumeCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the git repository the run works on', '.')
    .option('--state <dir>', `the state directory the run used (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--origin <url>', "the origin the run lands on, given again for its password (default: the one the run recorded); a run on an origin resumes from any checkout of the project");
  addProgressOptions(command).action(async (_given: ResumeFlags, self: Command) => {
    // The run's own settings were recorded; of the configuration only where it is (store) and what shows it (tui) apply.
    const configured = applyConfiguration<ResumeFlags>(ctx, self);
    if (configured !== null) ctx.exitCode = await resume(configured.ctx, configured.flags);
  });
}

async function resume(ctx: CommandContext, flags: ResumeFlags): Promise<number> {
  const repoDir = resolve(ctx.cwd, flags.repo);
  const stateDir = flags.state === undefined ? undefined : resolve(ctx.cwd, flags.state);
  const origin = flags.origin === undefined ? null : trunkOriginOf(flags.origin);
  if (origin !== null && !origin.ok) {
    usageError(ctx, `--origin: ${origin.error}`);
    return ctx.exitCode;
  }
  const found = await readUnfinishedRun(repoDir, stateDir, flags.store);
  if (!found.ok) {
    usageError(ctx, found.error);
    return ctx.exitCode;
  }
  noteStateDirInCheckout(ctx, flags);
  const { run } = found;
  const { settings } = run;
  // The run's own sandbox, as it was told; a weaker one is flagged again.
  const warning = sandboxWarning(settings.sandbox);
  if (warning !== null) ctx.stderr(warning);
  const workerModel = resolveRecorded(ctx, settings.workerModel, run);
  if (workerModel === null) return ctx.exitCode;
  const plannerModel = settings.plannerModel === settings.workerModel ? workerModel : resolveRecorded(ctx, settings.plannerModel, run);
  if (plannerModel === null) return ctx.exitCode;
  const progress = progressPrinter(ctx, flags);
  const state = runStateAt(found.stateDir, flags.store);
  const display = startRunDisplay(ctx, { tui: showsTui(ctx, flags), state, repoDir, progress });
  if (progress !== undefined && !showsTui(ctx, flags)) {
    ctx.stderr(`colony resume: ${describeUnfinishedRun(run)}, resumed ${run.resumes} time(s) before\n`);
    const andon = await userAndonOf(state, run.runId);
    if (andon !== null) ctx.stderr(`colony resume: spawning is paused by you (${andon}): no task starts until colony andon --release\n`);
  }
  let result: RunSessionResult;
  try {
    result = await runResumeSession({
      repoDir,
      ...(stateDir === undefined ? {} : { stateDir }),
      ...(flags.store === undefined ? {} : { storeUrl: flags.store }),
      ...(origin === null ? {} : { origin: origin.origin }),
      workerModel,
      plannerModel,
      signal: ctx.signal,
      // The key the run reads is a secret whatever its variable is called.
      secrets: [...(ctx.secrets ?? []), ...recordedKey(ctx, settings.apiKeyEnv), ...(origin === null ? [] : origin.secrets)],
      onEvent: display.onEvent,
    });
  } finally {
    await display.close();
  }
  return finishRun(ctx, result, flags.json === true, flags.store);
}

/** The model the run recorded, resolved as `colony run` did: the same spec, base URL, key variable and prices. */
function resolveRecorded(ctx: CommandContext, spec: string, run: ResumableRun): ChatModel | null {
  const resolved = resolveRecordedModel(ctx.env, spec, run.settings);
  if (resolved.ok) return resolved.model;
  usageError(ctx, `the run's model ${spec} cannot be used now: ${resolved.error}`);
  return null;
}

/** A model a run recorded (`spec`), with its base URL, key variable and prices, and the keys of `env`. */
export function resolveRecordedModel(env: CommandContext['env'], spec: string, settings: RunSettings): ReturnType<typeof resolveModel> {
  return resolveModel(spec, {
    env,
    prices: settings.prices,
    ...(settings.baseUrl === null ? {} : { baseUrl: settings.baseUrl }),
    ...(settings.apiKeyEnv === null ? {} : { apiKeyEnv: settings.apiKeyEnv }),
  }, CLI_MODEL_FACTORIES);
}

/** The reason of the user's andon on the run, or null when it is not paused (or the store cannot say). */
async function userAndonOf(state: RunState, runId: string): Promise<string | null> {
  try {
    const tasks = await openTaskTableToRead(state);
    if (tasks === null) return null;
    try {
      return (await tasks.runAndon(runId))?.reason ?? null;
    } finally {
      await tasks.close();
    }
  } catch {
    // A task table from before run andons existed, or none at all: nothing is paused.
    return null;
  }
}

export function recordedKey(ctx: Pick<CommandContext, 'env'>, variable: string | null): string[] {
  const value = variable === null ? undefined : ctx.env[variable];
  return value === undefined || value === '' ? [] : [value];
}
