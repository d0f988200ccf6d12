import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runCleanSession, type CleanReport } from '../../orchestrator/session/clean-session.js';
import { formatBytes } from '../../sandbox/process/command-limits.js';
import { shellWord } from '../../errors/shell-word.js';
import { EXIT_FAILED, EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { addSteeringOptions, stateDirOf } from '../state-dir-flags.js';

interface CleanFlags {
  readonly repo: string;
  readonly state?: string;
  readonly stopped?: boolean;
  readonly damaged?: boolean;
  readonly salvage?: boolean;
  readonly json?: boolean;
}

export function defineCleanCommand(command: Command, ctx: CommandContext): void {
  addSteeringOptions(command)
    .option('--stopped', 'also remove what a stopped run keeps for colony resume (its workspaces, their salvaged work kept); the run is recorded as abandoned')
    .option('--damaged', 'when the state directory\'s colony.db is damaged: unmount its overlays, drop its worktree records, and move it aside to <state>.damaged, kept')
    .option('--salvage', 'also delete the salvaged work of failed workers (refs/colony/salvaged/*), once no run can go on')
    .option('--json', 'print what was cleaned as JSON')
    .action(async (flags: CleanFlags) => {
      ctx.exitCode = await clean(ctx, flags);
    });
}

async function clean(ctx: CommandContext, flags: CleanFlags): Promise<number> {
  if (flags.damaged === true && (flags.stopped === true || flags.salvage === true)) {
    usageError(ctx, '--damaged moves the whole state directory aside and cleans nothing else in it.', 'Run colony clean --damaged alone; pass --salvage in a colony clean after it if the salvage refs should go too.');
    return ctx.exitCode;
  }
  const result = await runCleanSession({
    repoDir: resolve(ctx.cwd, flags.repo),
    stateDir: stateDirOf(ctx, flags),
    stopped: flags.stopped === true,
    damaged: flags.damaged === true,
    salvage: flags.salvage === true,
    ...(ctx.secrets === undefined ? {} : { secrets: ctx.secrets }),
  });
  if (!result.ok) {
    if (result.usage) {
      usageError(ctx, result.error);
      return ctx.exitCode;
    }
    ctx.stderr(`colony: ${result.error}\n`);
    return EXIT_FAILED;
  }
  const { report } = result;
  if (flags.json === true) ctx.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else ctx.stdout(`${describeClean(report).join('\n')}\n`);
  return report.problems.length > 0 ? EXIT_FAILED : EXIT_OK;
}

/** The report as a person reads it: one line of what was freed, then what was kept and why. */
export function describeClean(report: CleanReport): string[] {
  const freed = [
    counted(report.mounts, 'overlay mount', 'unmounted'),
    counted(report.workspaces, 'workspace', 'removed'),
    counted(report.worktreeRecords, 'worktree record', 'removed'),
    counted(report.prunedRefs.length, 'salvage ref', 'pruned'),
  ].filter((part) => part !== null);
  const lines: string[] = [];
  if (report.movedTo !== null) {
    lines.push(
      `Moved the damaged state directory ${report.stateDir} aside to ${report.movedTo}, kept as it was and out of git status` +
        `${freed.length > 0 ? ` (${freed.join(', ')})` : ''}. The next colony run starts a new run.`,
    );
    if (report.salvaged.length > 0) lines.push(`Work of its workspaces that main lacks is kept as ${report.salvaged.join(', ')} (look with git log ${shellWord(report.salvaged[0] ?? '')}).`);
  } else if (freed.length === 0 && report.bytes === 0) {
    lines.push(report.found ? `Nothing to clean in ${report.stateDir}.` : `Nothing to clean: there is no state directory at ${report.stateDir}.`);
  } else {
    lines.push(`Cleaned ${report.stateDir}: ${freed.length > 0 ? freed.join(', ') : 'no workspace'}; ${formatBytes(report.bytes)} freed.`);
  }
  if (report.prunedRefs.length > 0) lines.push(`Pruned ${report.prunedRefs.join(', ')}.`);
  if (report.abandoned !== null) lines.push(`The run ${report.abandoned} is recorded as abandoned: colony resume has nothing to take up; colony run GOAL.md starts a new run.`);
  if (report.keptForResume !== null) {
    lines.push(`Kept for colony resume: the workspaces and spill files of the unfinished run ${report.keptForResume}. colony clean --stopped removes them too, and the run is then abandoned.`);
  }
  for (const kept of report.kept) lines.push(`Kept ${kept.path}: ${kept.reason}`);
  for (const problem of report.problems) lines.push(`Not cleaned: ${problem}`);
  return lines;
}

function counted(count: number, noun: string, verb: string): string | null {
  return count === 0 ? null : `${count} ${noun}${count === 1 ? '' : 's'} ${verb}`;
}
