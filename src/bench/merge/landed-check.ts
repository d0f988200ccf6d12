import { hasConflictMarkers } from '../../workspace/merge/conflict-markers.js';
import { describeFailure, runGit, splitNul } from '../../workspace/git/git.js';
import type { Repository } from '../../workspace/git/repository.js';
import { SHARED_FILE, isChangeLine } from './planned-change.js';
import type { Landing } from './run-tally.js';

/** Whether main holds exactly what the mergers were told landed; `problems` says what is wrong. */
export interface LandedCheck {
  readonly passed: boolean;
  readonly problems: string[];
}

const PROBLEMS_LISTED = 20;

/** A merger's file, `m<k>/c<n>.txt`. */
const CHANGE_FILE = /^m\d+\/c\d+\.txt$/;

/**
 * Reads main once and checks every landing against it: each new file exists, each added line
 * is in the shared file exactly once, and nothing a merger made is on main without having been
 * reported landed. The shared file must also be free of conflict markers.
 */
export async function checkLanded(repo: Repository, landings: readonly Landing[]): Promise<LandedCheck> {
  const problems: string[] = [];
  const listArgs = ['ls-tree', '-r', '--name-only', '-z', `refs/heads/${repo.mainBranch}`];
  const listed = await runGit(repo.root, listArgs);
  const showArgs = ['cat-file', 'blob', `refs/heads/${repo.mainBranch}:${SHARED_FILE}`];
  const shown = await runGit(repo.root, showArgs);
  if (listed.code !== 0) return { passed: false, problems: [`cannot read main: ${describeFailure(listArgs, listed)}`] };
  if (shown.code !== 0) return { passed: false, problems: [`cannot read ${SHARED_FILE} on main: ${describeFailure(showArgs, shown)}`] };

  const filesOnMain = new Set(splitNul(listed.stdout));
  const lineCounts = new Map<string, number>();
  for (const line of shown.stdout.split('\n')) lineCounts.set(line, (lineCounts.get(line) ?? 0) + 1);
  const reportedFiles = new Set<string>();
  const reportedLines = new Set<string>();
  for (const { change } of landings) {
    if (change.kind === 'file') {
      reportedFiles.add(change.path);
      if (!filesOnMain.has(change.path)) problems.push(`${change.path} was reported landed but is not on main`);
    } else {
      reportedLines.add(change.line);
      const count = lineCounts.get(change.line) ?? 0;
      if (count !== 1) problems.push(`"${change.line}" was reported landed but is in ${SHARED_FILE} ${count} times, not once`);
    }
  }
  for (const path of filesOnMain) {
    if (CHANGE_FILE.test(path) && !reportedFiles.has(path)) problems.push(`${path} is on main but was never reported landed`);
  }
  for (const line of lineCounts.keys()) {
    if (isChangeLine(line) && !reportedLines.has(line)) problems.push(`"${line}" is in ${SHARED_FILE} on main but was never reported landed`);
  }
  if (hasConflictMarkers(shown.stdout)) problems.push(`${SHARED_FILE} on main still holds conflict markers`);
  const listedProblems = problems.slice(0, PROBLEMS_LISTED);
  if (problems.length > PROBLEMS_LISTED) listedProblems.push(`and ${problems.length - PROBLEMS_LISTED} more`);
  return { passed: problems.length === 0, problems: listedProblems };
}
