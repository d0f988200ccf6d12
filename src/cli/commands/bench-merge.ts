import { InvalidArgumentError, type Command } from 'commander';
import { runMergeBench } from '../../bench/merge/merge-bench.js';
import type { LandedCheck, MergeBenchFigures } from '../../bench/merge/merge-bench.js';
import { EXIT_FAILED, EXIT_OK, positiveInteger, type CommandContext } from '../command-context.js';
import { count } from '../../observe/text-table.js';

interface BenchMergeFlags {
  readonly mergers: number;
  readonly shared: number;
  readonly seconds: number;
  readonly resolveMs: number;
  readonly integrator?: boolean;
  readonly seed: number;
  readonly insertShare: number;
  readonly files: number;
  readonly json?: boolean;
}

function fraction(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !(parsed >= 0 && parsed <= 1)) throw new InvalidArgumentError(`expected a number from 0 to 1, got "${value}".`);
  return parsed;
}

function positiveNumber(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !(parsed > 0 && Number.isFinite(parsed))) throw new InvalidArgumentError(`expected a number of seconds above 0, got "${value}".`);
  return parsed;
}

function wholeNumber(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError(`expected a whole number of at least 0, got "${value}".`);
  return parsed;
}

function integer(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isInteger(parsed)) throw new InvalidArgumentError(`expected a whole number, got "${value}".`);
  return parsed;
}

/**
 * `colony bench merge`: K mergers landing changes on a scratch repository, by self-merge or
 * through one integrator. Registered on the `bench` command group it is given.
 */
export function registerBenchMergeCommand(bench: Command, ctx: CommandContext): void {
  bench
    .command('merge')
    .description(
      'Measure landing on main: K mergers on a scratch repository each land their own changes (mergeToMain), or hand them to one serial integrator (--integrator). Checks at the end that every landed change is on main exactly once.',
    )
    .option('--mergers <k>', 'mergers working at once, each in its own workspace', positiveInteger, 64)
    .option('--shared <f>', 'the chance that a change appends a line to one shared file (0 to 1); the rest add a file of their own', fraction, 0)
    .option('--seconds <s>', 'how long the mergers keep making changes', positiveNumber, 120)
    .option('--resolve-ms <ms>', "an agent's time to resolve a conflict that reaches it", wholeNumber, 10_000)
    .option('--integrator', 'the baseline: mergers hand their branches to one serial integrator')
    .option('--seed <n>', "the seed of the mergers' random choices", integer, 1)
    .option('--insert-share <p>', 'of the shared-file changes, the chance that one inserts its line near the top: a conflict colony hands to the agent (0 to 1)', fraction, 0)
    .option('--files <n>', "files in the scratch repository's first commit", wholeNumber, 2000)
    .option('--json', 'print the figures as JSON')
    .action(async (flags: BenchMergeFlags) => {
      ctx.exitCode = await benchMerge(ctx, flags);
    });
}

async function benchMerge(ctx: CommandContext, flags: BenchMergeFlags): Promise<number> {
  const result = await runMergeBench({
    mode: flags.integrator === true ? 'integrator' : 'self-merge',
    mergers: flags.mergers,
    shared: flags.shared,
    insertShare: flags.insertShare,
    seconds: flags.seconds,
    resolveMs: flags.resolveMs,
    seed: flags.seed,
    files: flags.files,
    signal: ctx.signal,
    onProgress: (line) => ctx.stderr(`${line}\n`),
  });
  if (!result.ok) {
    ctx.stderr(`colony: ${result.error}\n`);
    return EXIT_FAILED;
  }
  const { figures, check } = result;
  ctx.stdout(flags.json === true ? `${JSON.stringify({ ...figures, check })}\n` : formatMergeBench(figures, check));
  if (figures.failedMerges > 0) ctx.stderr(`colony: ${figures.failedMerges} merges failed; the first: ${figures.failures.join('\n  ')}\n`);
  if (!check.passed) {
    ctx.stderr(`colony: main does not hold exactly what was reported landed:\n  ${check.problems.join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

const percent = (share: number): string => `${(share * 100).toFixed(0)}%`;

const WAIT_SOURCES: Readonly<Record<MergeBenchFigures['waitSource'], string>> = {
  waitMs: "queued for main's turn, as mergeToMain reports it",
  queue: 'from queueing a branch until it was on main',
};

/** The figures as a person reads them. */
export function formatMergeBench(figures: MergeBenchFigures, check: LandedCheck): string {
  const lines = [
    `colony bench merge: ${figures.mode}, ${figures.mergers} mergers, shared ${figures.shared}${figures.insertShare > 0 ? ` (inserted ${figures.insertShare})` : ''}, ${figures.seconds.toFixed(0)} s, resolve ${count(figures.resolveMs)} ms, seed ${figures.seed}`,
    `  landed      ${count(figures.landed)}: ${count(figures.commitsPerHour)}/h, last quarter ${count(figures.lastQuarterPerHour)}/h (${count(figures.landedAfterWindow)} more landed after the window closed)`,
    `  mergers     ${figures.mergersLanded} of ${figures.mergers} landed at least once`,
    `  retries     ${figures.retriesPerCommit.toFixed(2)} per commit`,
    `  conflicts   ${count(figures.conflicts)}: ${count(figures.resolvedMechanically)} settled by colony, ${count(figures.resolvedByAgent)} resolved by an agent`,
    `  waiting     ${percent(figures.waitShare)} of the mergers' time (${WAIT_SOURCES[figures.waitSource]})`,
    `  handover    ${percent(figures.handoverShare)} of the mergers' time from handing a change over until it was on main`,
    `  failed      ${count(figures.failedMerges)} merges`,
    `  check       ${check.passed ? 'passed: every landed change is on main exactly once, and nothing else is' : `FAILED: ${check.problems.length} problems`}`,
  ];
  return `${lines.join('\n')}\n`;
}
