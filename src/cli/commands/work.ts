import { resolve } from 'node:path';
import type { Command } from 'commander';
import { handoffLists, type Handoff } from '../../events/handoff.js';
import { resolveModel } from '../../model/registry.js';
import { CLI_MODEL_FACTORIES } from '../model-factories.js';
import { formatEventLine } from '../../observe/view/format-event.js';
import { runWorkSession } from '../../orchestrator/session/work-session.js';
import { addSandboxOptions, reportSandboxSettings, type SandboxFlags } from '../sandbox-options.js';
import { addSetupOptions, setupOf, type SetupFlags } from '../setup-options.js';
import { announcingPromptOverrides } from '../prompt-override-notice.js';
import type { WorkspaceMethodChoice } from '../../workspace/workspace-method-choice.js';
import { EXIT_FAILED, EXIT_OK, positiveInteger, usageError, workspacesOption, type CommandContext } from '../command-context.js';
import { shellWord } from '../../errors/shell-word.js';
import { landingLines } from './run-report.js';
import { DEFAULT_STATE_DIR_HELP } from '../state-dir-flags.js';

interface WorkFlags extends SandboxFlags, SetupFlags {
  readonly repo: string;
  readonly trunk?: string;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly apiKeyEnv?: string;
  readonly state?: string;
  readonly maxSteps: number;
  /** False with `--no-shared-deps`. */
  readonly sharedDeps: boolean;
  readonly workspaces: WorkspaceMethodChoice;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

export function defineWorkCommand(command: Command, ctx: CommandContext): void {
  command
    .argument('<task>', 'a Markdown file describing the task')
    .option('--repo <dir>', 'the git repository to work on', '.')
    .option('--trunk <branch>', "the branch the work lands on (default: a branch of its own, colony/<short task name>, made from the commit checked out)")
    .option('--model <spec>', 'the model: sim[?options], openai:<model>, anthropic:<model>, openai-compatible:<model>')
    .option('--base-url <url>', 'the API base URL (required for openai-compatible)')
    .option('--api-key-env <name>', 'the environment variable holding the API key')
    .option('--state <dir>', `where colony keeps its state (${DEFAULT_STATE_DIR_HELP})`)
    .option('--max-steps <n>', 'the most model calls the worker may make', positiveInteger, 100)
    .option('--no-shared-deps', "do not install the repository's dependencies for the workspace; it starts without node_modules")
    .addOption(workspacesOption())
    .option('--json', 'print the handoff as JSON')
    .option('--quiet', 'print no progress lines');
  addSetupOptions(command);
  addSandboxOptions(command).action(async (taskPath: string, flags: WorkFlags) => {
    ctx.exitCode = await work(ctx, taskPath, flags);
  });
}

async function work(ctx: CommandContext, taskPath: string, flags: WorkFlags): Promise<number> {
  if (flags.model === undefined) {
    usageError(ctx, 'no model given.', 'Pass one, e.g. --model sim (the simulated model) or --model anthropic:claude-sonnet-4-5');
    return ctx.exitCode;
  }
  const resolved = resolveModel(flags.model, {
    env: ctx.env,
    baseUrl: flags.baseUrl,
    apiKeyEnv: flags.apiKeyEnv,
  }, CLI_MODEL_FACTORIES);
  if (!resolved.ok) {
    usageError(ctx, resolved.error);
    return ctx.exitCode;
  }
  const sandbox = reportSandboxSettings(ctx, flags, resolve(ctx.cwd, flags.repo));
  if (sandbox === null) return ctx.exitCode;
  const setup = setupOf(flags);
  if (!setup.ok) {
    usageError(ctx, setup.error);
    return ctx.exitCode;
  }
  const showProgress = flags.json !== true && flags.quiet !== true;
  const result = await runWorkSession({
    sandbox,
    repoDir: resolve(ctx.cwd, flags.repo),
    taskPath: resolve(ctx.cwd, taskPath),
    model: resolved.model,
    ...(flags.state === undefined ? {} : { stateDir: resolve(ctx.cwd, flags.state) }),
    maxSteps: flags.maxSteps,
    trunk: flags.trunk,
    sharedDependencies: flags.sharedDeps,
    setup: setup.setup,
    workspaces: flags.workspaces,
    signal: ctx.signal,
    secrets: ctx.secrets ?? [],
    onEvent: announcingPromptOverrides(ctx, showProgress ? (event) => event.type !== 'model.requested' && ctx.stderr(`${formatEventLine(event)}\n`) : undefined),
  });
  if (!result.ok && result.failed === true) {
    ctx.stderr(`colony: ${result.error}\n`);
    return EXIT_FAILED;
  }
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  if (flags.json === true) {
    const outcome = {
      runId: result.runId,
      handoff: result.handoff,
      main: result.mainCommit,
      checkoutProblem: result.checkoutProblem,
      keptWorkspace: result.keptWorkspace,
      salvaged: result.salvaged,
      workspaces: result.workspaceMethod,
    };
    ctx.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
  } else {
    ctx.stdout(formatHandoff(result.handoff));
    ctx.stdout(`\n${landingLines(result, resolve(ctx.cwd, flags.repo)).join('\n')}\nEvents: colony events --state ${shellWord(result.stateDir)}\n`);
    if (result.checkoutProblem !== null) ctx.stderr(`colony: your checkout was not updated: ${result.checkoutProblem}\n`);
  }
  return result.handoff.status === 'done' ? EXIT_OK : EXIT_FAILED;
}

/** A handoff as a person reads it. */
export function formatHandoff(handoff: Handoff): string {
  const lines = [`handoff: ${handoff.status}${handoff.synthetic ? ' (written by colony: the worker ended without one)' : ''}`];
  lines.push(`summary: ${handoff.summary}`);
  if (handoff.commits.length > 0) lines.push(`commits: ${handoff.commits.map((commit) => commit.slice(0, 12)).join(', ')}`);
  if (handoff.evidence.trim() !== '') lines.push('evidence:', ...indent(handoff.evidence.trimEnd().split('\n')));
  for (const [name, items] of handoffLists(handoff)) {
    if (items.length > 0) lines.push(`${name}:`, ...items.map((item) => `  - ${item}`));
  }
  return `${lines.join('\n')}\n`;
}

function indent(lines: readonly string[]): string[] {
  return lines.map((line) => `    ${line}`);
}
