import type { CleanReport } from '../../orchestrator/session/clean-session.js';
import { formatBytes } from '../../sandbox/process/command-limits.js';
import { shellWord } from '../../errors/shell-word.js';

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
    lines.push(`Cleaned ${report.stateDir}: ${[...freed, `${formatBytes(report.bytes)} freed`].join(', ')}.`);
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
