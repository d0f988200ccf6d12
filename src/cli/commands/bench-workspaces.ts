import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { chooseWorkspaceProvider } from '../../workspace/providers/choose-workspace-provider.js';
import { WORKSPACE_METHOD_CHOICES, type WorkspaceMethodChoice } from '../../workspace/workspace-method-choice.js';
import { runGit } from '../../workspace/git/git.js';
import { openRepository } from '../../workspace/git/repository.js';
import { measureWorkspaces } from '../../bench/workspaces/workspace-benchmark.js';
import { unmountOverlaysUnder } from '../../workspace/providers/overlay/overlay-mount.js';
import { EXIT_FAILED, EXIT_OK, positiveInteger, usageError, type CommandContext } from '../command-context.js';
import { errorMessage } from '../../errors/error-message.js';

interface BenchWorkspacesFlags {
  readonly repo: string;
  readonly count: number;
  readonly method: WorkspaceMethodChoice;
  readonly json?: boolean;
}

export function registerBenchWorkspaces(bench: Command, ctx: CommandContext): void {
  bench
    .command('workspaces')
    .description('Make N workspaces of a repository the way colony would, measure time and disk per workspace, and remove them.')
    .option('--repo <dir>', 'the git repository (a checkout) to make workspaces of', '.')
    .option('--count <n>', 'how many workspaces to make', positiveInteger, 10)
    .addOption(
      new Option('--method <method>', 'how to make them: overlay, worktree, or auto (what colony run would take here)').choices([...WORKSPACE_METHOD_CHOICES]).default('auto'),
    )
    .option('--json', 'print {count, method, msPerWorkspace, bytesPerWorkspace, ...} as JSON')
    .action(async (flags: BenchWorkspacesFlags) => {
      ctx.exitCode = await benchWorkspaces(ctx, flags);
    });
}

async function benchWorkspaces(ctx: CommandContext, flags: BenchWorkspacesFlags): Promise<number> {
  const opened = await openRepository(resolve(ctx.cwd, flags.repo));
  if (!opened.ok) {
    usageError(ctx, opened.error);
    return ctx.exitCode;
  }
  const { repo } = opened;
  const scratch = await realpath(await mkdtemp(join(tmpdir(), 'colony-bench-workspaces-')));
  try {
    const storageDir = join(scratch, 'overlay');
    const chosen = await chooseWorkspaceProvider(repo, flags.method, { storageDir });
    if (!chosen.ok) {
      usageError(ctx, chosen.error);
      return ctx.exitCode;
    }
    const measured = await measureWorkspaces(repo, chosen.provider, {
      count: flags.count,
      parentDir: join(scratch, 'workspaces'),
      storageDir,
      idPrefix: `bench-${process.pid}`,
      status: async (workspace) => {
        await runGit(workspace, ['status', '--porcelain']);
      },
    });
    if (flags.json === true) {
      ctx.stdout(`${JSON.stringify(measured)}\n`);
    } else {
      const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MB`;
      ctx.stdout(
        [
          `${measured.count} ${measured.method} workspace(s) of ${repo.root} (${chosen.reason})`,
          `  ${measured.msPerWorkspace.toFixed(1)} ms and ${megabytes(measured.bytesPerWorkspace)} per workspace`,
          `  shared by all: ${megabytes(measured.sharedBytes)}, made in ${measured.sharedMs.toFixed(0)} ms`,
          `  first git status: ${measured.firstStatusMs.toFixed(0)} ms`,
          '',
        ].join('\n'),
      );
    }
    return EXIT_OK;
  } catch (error) {
    ctx.stderr(`colony: the benchmark failed: ${errorMessage(error)}\n`);
    return EXIT_FAILED;
  } finally {
    // Whatever happened, no mount and no file of the benchmark outlives it.
    await unmountOverlaysUnder(scratch);
    await rm(scratch, { recursive: true, force: true });
  }
}
