import { bisectFirstBad } from '../../workspace/green/bisect.js';
import { commitsBetween } from '../../workspace/green/green-branch.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { SnapshotCheck } from './green-snapshot.js';
import type { GreenState, FailureOrigin } from './types.js';

export interface TraceOptions {
  readonly repo: Repository;
  /** The red snapshot. */
  readonly snapshot: SnapshotCheck;
  /** Its failure lines that no failure already known explains. */
  readonly newLines: readonly string[];
  /** The last commit a snapshot passed on; null when none has in this run. */
  readonly good: string | null;
  /** Main when the run started: the bisect's floor when no snapshot has passed yet. */
  readonly base: string;
  /** The check on one commit; the caller caches, so a commit is never checked twice. */
  readonly check: (commit: string) => Promise<SnapshotCheck>;
  /** How many commits are checked at once. */
  readonly parallel: number;
  readonly now: () => number;
}

/**
 * Finds the commit that brought each new failure of a red snapshot. The snapshot's new
 * failure lines are bisected between the last passing commit and the snapshot: the first
 * commit whose check shows any of them is one origin, and the lines it shows are its failure.
 * Lines still unexplained were brought by later commits, so the search goes on above that
 * commit, until every line has its origin. Two breaks that land between snapshots are told
 * apart this way, though the first keeps main red over the second.
 *
 * With no passing commit yet in the run, the run's first commit is checked first: lines it
 * already shows were there before the run, and their origin is null.
 */
export async function traceNewFailures(options: TraceOptions): Promise<FailureOrigin[]> {
  const { repo, snapshot, check, parallel, now } = options;
  const remaining = new Set(options.newLines);
  const origins: FailureOrigin[] = [];
  let floor = options.good;
  if (floor === null) {
    const started = now();
    const atBase = await check(options.base);
    const before = atBase.passed ? [] : atBase.failures.filter((line) => remaining.has(line));
    if (before.length > 0) {
      origins.push({ firstBad: null, good: null, lines: before, checks: 1, durationMs: now() - started });
      for (const line of before) remaining.delete(line);
    }
    floor = options.base;
  }
  while (remaining.size > 0) {
    const started = now();
    const commits = await commitsBetween(repo, floor, snapshot.commit);
    if (commits.length === 0) break;
    const seen = new Map<string, SnapshotCheck>([[snapshot.commit, snapshot]]);
    const bad = async (index: number): Promise<boolean> => {
      const commit = commits[index] ?? '';
      const result = seen.get(commit) ?? (await check(commit));
      seen.set(commit, result);
      return !result.passed && result.failures.some((line) => remaining.has(line));
    };
    const found = await bisectFirstBad(commits.length, bad, { parallel, known: new Map([[commits.length - 1, true]]) });
    const firstBad = commits[found.firstBad] ?? snapshot.commit;
    const lines = (seen.get(firstBad)?.failures ?? []).filter((line) => remaining.has(line));
    // By the bisect's contract the first bad commit shows at least one line; guard the loop all the same.
    if (lines.length === 0) break;
    origins.push({ firstBad, good: floor, lines, checks: found.checked.length, durationMs: now() - started });
    for (const line of lines) remaining.delete(line);
    floor = firstBad;
  }
  return origins;
}

/** New failure lines by where their bisect starts: above their fix when they were fixed and came back, else the last pass. */
export function groupByFloor(lines: readonly string[], state: GreenState): Map<string | null, string[]> {
  const groups = new Map<string | null, string[]>();
  for (const line of lines) {
    const floor = state.fixedAt.get(line) ?? state.good;
    groups.set(floor, [...(groups.get(floor) ?? []), line]);
  }
  return groups;
}
