import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { resolveModel } from '../../model/registry.js';
import { formatEventLine } from '../../observe/format-event.js';
import { runWorkSession } from '../../orchestrator/work-session.js';
import { runGit } from '../../workspace/git.js';
import { EXIT_FAILED, EXIT_OK, usageError, type CommandContext } from '../command-context.js';

const EXAMPLE = new URL('../../../examples/text-kit/', import.meta.url);
const DEFAULT_MODEL = 'sim?seed=2&latency=20..120&bug=0.3&malformed=0.05';

interface DemoFlags {
  readonly dir?: string;
  readonly model: string;
  readonly quiet?: boolean;
}

export function registerDemoCommand(program: Command, ctx: CommandContext): void {
  program
    .command('demo')
    .description('Build the bundled example project with the simulated model, one worker per task.')
    .option('--dir <dir>', 'where to put the example repository (default: a new temporary directory)')
    .option('--model <spec>', 'the model to use', DEFAULT_MODEL)
    .option('--quiet', 'print no progress lines')
    .action(async (flags: DemoFlags) => {
      ctx.exitCode = await demo(ctx, flags);
    });
}

async function demo(ctx: CommandContext, flags: DemoFlags): Promise<number> {
  const resolved = resolveModel(flags.model, { env: ctx.env });
  if (!resolved.ok) {
    usageError(ctx, resolved.error);
    return ctx.exitCode;
  }
  const base = flags.dir === undefined ? mkdtempSync(join(tmpdir(), 'colony-demo-')) : resolve(ctx.cwd, flags.dir);
  const repoDir = join(base, 'text-kit');
  mkdirSync(base, { recursive: true });
  cpSync(EXAMPLE, repoDir, { recursive: true, errorOnExist: true, force: false });
  await runGit(repoDir, ['init', '-q', '-b', 'main']);
  await runGit(repoDir, ['add', '-A']);
  await runGit(repoDir, ['commit', '-q', '-m', 'text-kit: the starting point']);
  ctx.stdout(`colony demo: building the example in ${repoDir} with ${flags.model}\n`);

  const tasks = readdirSync(join(repoDir, 'tasks')).filter((name) => name.endsWith('.md')).sort();
  let done = 0;
  for (const [index, name] of tasks.entries()) {
    ctx.stdout(`\n[${index + 1}/${tasks.length}] tasks/${name}\n`);
    const result = await runWorkSession({
      repoDir,
      taskPath: join(repoDir, 'tasks', name),
      model: resolved.model,
      maxSteps: 60,
      signal: ctx.signal,
      ...(flags.quiet === true ? {} : { onEvent: (event) => event.type !== 'model.requested' && ctx.stdout(`  ${formatEventLine(event)}\n`) }),
    });
    if (!result.ok) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    ctx.stdout(`  => ${result.handoff.status}: ${result.handoff.summary}\n`);
    if (result.handoff.status === 'done') done += 1;
    if (ctx.signal.aborted) break;
  }

  const test = spawnSync('node', ['--test'], { cwd: repoDir, encoding: 'utf8' });
  // node's test runner prints its totals as "# tests 34" (TAP, when piped) or "ℹ tests 34".
  const summary = (test.stdout ?? '')
    .split('\n')
    .filter((line) => /^[#ℹ] (tests|pass|fail) \d+$/.test(line))
    .map((line) => line.slice(2))
    .join(', ');
  const log = await runGit(repoDir, ['log', '--oneline', 'main']);
  ctx.stdout(
    [
      '',
      `${done} of ${tasks.length} tasks done; main has ${log.stdout.trim().split('\n').length} commits.`,
      `node --test on main: ${test.status === 0 ? 'passes' : 'FAILS'} (${summary})`,
      '',
      'Look around:',
      `  git -C ${repoDir} log --stat main`,
      `  npx colony events --repo ${repoDir}`,
      '',
    ].join('\n'),
  );
  return done === tasks.length && test.status === 0 ? EXIT_OK : EXIT_FAILED;
}
