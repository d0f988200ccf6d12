import { chmodSync, cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { resolveModel } from '../../model/registry.js';
import { CLI_MODEL_FACTORIES } from '../model-factories.js';
import { formatEventLine } from '../../observe/view/format-event.js';
import { runRunSession, type RunSessionResult } from '../../orchestrator/session/run-session.js';
import { defaultStateDir } from '../../orchestrator/setup/state-directory.js';
import type { RecordedEvent } from '../../events/event-types.js';
import { runGit } from '../../workspace/git/git.js';
import { EXIT_FAILED, EXIT_OK, positiveInteger, usageError, type CommandContext } from '../command-context.js';
import { formatRunSummary, readRunStatus } from './run-report.js';
import { showsTui } from './run.js';
import { startRunDisplay } from '../run-display.js';
import { openSandbox } from '../../sandbox/sandbox.js';
import { type SandboxMethod } from '../../sandbox/types.js';
import { shellWord } from '../../errors/shell-word.js';

const EXAMPLE_NAME = 'toolbox';
const EXAMPLE = new URL(`../../../examples/${EXAMPLE_NAME}/`, import.meta.url);
const DEFAULT_MODEL = 'sim?seed=2&latency=20..120&bug=0.3&malformed=0.05';
const DEMO_EVENTS = new Set(['sandbox.opened', 'agent.started', 'agent.ended', 'merge.landed', 'merge.conflicted', 'acceptance.checked', 'handoff.delivered', 'planner.finished', 'main.checked', 'green.checked', 'green.advanced', 'green.bisected', 'green.reported']);

interface DemoFlags {
  readonly dir?: string;
  readonly model: string;
  readonly workers: number;
  readonly sandbox?: SandboxMethod;
  readonly quiet?: boolean;
  /** False with `--no-tui`. */
  readonly tui?: boolean;
}

export function defineDemoCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--dir <dir>', 'where to put the example repository (default: a new temporary directory)')
    .option('--model <spec>', 'the model to use', DEFAULT_MODEL)
    .option('--workers <n>', 'the most workers running at once', positiveInteger, 4)
    .addOption(
      new Option('--sandbox <method>', "how the agents' commands are confined (default: bubblewrap where it works here, else none)").choices([
        'bubblewrap',
        'unshare',
        'none',
      ]),
    )
    .option('--quiet', 'print no progress lines')
    .option('--no-tui', 'print progress lines instead of the terminal UI, even in a terminal')
    .action(async (flags: DemoFlags) => {
      ctx.exitCode = await demo(ctx, flags);
    });
}

async function demo(ctx: CommandContext, flags: DemoFlags): Promise<number> {
  const resolved = resolveModel(flags.model, { env: ctx.env }, CLI_MODEL_FACTORIES);
  if (!resolved.ok) {
    usageError(ctx, resolved.error);
    return ctx.exitCode;
  }
  const sandbox = flags.sandbox ?? (await demoSandbox(ctx));
  const base = flags.dir === undefined ? mkdtempSync(join(tmpdir(), 'colony-demo-')) : resolve(ctx.cwd, flags.dir);
  const repoDir = join(base, EXAMPLE_NAME);
  mkdirSync(base, { recursive: true });
  // A new temporary directory is private to its owner; the sandboxed agents, other users, must get through it to their workspaces.
  if (flags.dir === undefined) chmodSync(base, 0o755);
  cpSync(EXAMPLE, repoDir, { recursive: true, errorOnExist: true, force: false });
  await runGit(repoDir, ['init', '-q', '-b', 'main']);
  await runGit(repoDir, ['add', '-A']);
  await runGit(repoDir, ['commit', '-q', '-m', `${EXAMPLE_NAME}: the starting point`]);
  ctx.stdout(`colony demo: building examples/${EXAMPLE_NAME} in ${repoDir} with ${flags.model}, up to ${flags.workers} workers at once\n\n`);

  // In a terminal the demo is the product: the terminal UI over the run, then the summary.
  const progress = flags.quiet === true ? undefined : (event: RecordedEvent) => DEMO_EVENTS.has(event.type) && ctx.stdout(`  ${formatEventLine(event)}\n`);
  const display = startRunDisplay(ctx, { tui: showsTui(ctx, flags), state: { stateDir: defaultStateDir(repoDir) }, repoDir, progress });
  let result: RunSessionResult;
  try {
    result = await runRunSession({
      repoDir,
      workerModel: resolved.model,
      plannerModel: resolved.model,
      settings: {
        goalPath: join(repoDir, 'GOAL.md'),
        workers: flags.workers,
        sandbox: { method: sandbox, network: sandbox === 'none' ? { kind: 'all' } : { kind: 'none' } },
        workerMaxSteps: 60,
        plannerMaxSteps: 500,
      },
      signal: ctx.signal,
      onEvent: display.onEvent,
    });
  } finally {
    await display.close();
  }
  if (!result.ok) {
    usageError(ctx, result.error);
    return ctx.exitCode;
  }
  ctx.stdout(formatRunSummary(result, await readRunStatus({ stateDir: result.stateDir }, result.runId)));
  ctx.stdout(
    [
      'Look around:',
      `  git -C ${shellWord(repoDir)} log --oneline --graph ${shellWord(result.mainBranch)}`,
      `  colony status --repo ${shellWord(repoDir)}`,
      `  colony replay --repo ${shellWord(repoDir)} --speed 2     # the run again, in the terminal UI`,
      `  colony analyze --repo ${shellWord(repoDir)}`,
      `  colony green --repo ${shellWord(repoDir)}                  # where the green branch is, and how often main was red`,
      `  colony events --repo ${shellWord(repoDir)} --type handoff.submitted`,
      '',
    ].join('\n'),
  );
  return result.status === 'done' ? EXIT_OK : EXIT_FAILED;
}

/**
 * The demo confines its agents' commands wherever bubblewrap works here. Where it does not, the
 * demo still runs, unconfined, and says why: its agents are the bundled simulated model, whose
 * only commands are the example's own tests, not a model writing commands of its choosing.
 * `colony run` never falls back like this.
 */
async function demoSandbox(ctx: CommandContext): Promise<SandboxMethod> {
  const probe = await openSandbox({ method: 'bubblewrap', runId: 'demo-probe' });
  if (probe.ok) {
    await probe.sandbox.close();
    return 'bubblewrap';
  }
  ctx.stdout(
    `colony demo: no sandbox here, so its simulated agents run the example's own tests unconfined (colony run would refuse): ${probe.error}.\n` +
      `To fix it: ${probe.fix}.\n\n`,
  );
  return 'none';
}
