import type { RecordedEvent } from '../../events/event-types.js';
import type { SnapshotCheck } from './green-snapshot.js';

/* The green loop's shared types: what it answers with, the loop as the run sees it, and the state it keeps of open failures. */

/** What the release snapshot said: a run ends done only when it passed (or no check is known). */
export interface ReleaseVerdict {
  readonly passed: boolean;
  /** The run is stopping: there is no verdict, and the run ends stopped, to be resumed. */
  readonly stopped: boolean;
  /** The snapshot; null when no check command is known, or the check could not run. */
  readonly check: SnapshotCheck | null;
  /** For a root planner's done `finish` while it does not pass: why, and what to do. */
  readonly refusal: string | null;
}

export interface GreenLoop {
  /** Every event of the run, as it is recorded: a landing that reaches the count wakes the loop at once. */
  observe(event: RecordedEvent): void;
  /** A snapshot as soon as the one going (if any) is over (`colony green --now` on a live run). */
  request(): void;
  /** A snapshot now, after the one going (if any). */
  checkNow(): Promise<SnapshotOutcome>;
  /** The release snapshot of main as it is now; a pass already taken of the same commit is not taken again. */
  release(): Promise<ReleaseVerdict>;
  /** Stops the loop, killing a check in flight; the green branch stays where the last passing snapshot put it. */
  stop(): Promise<void>;
}

/** One snapshot and the failures open after it (none when it passed). */
export interface GreenSnapshot {
  readonly check: SnapshotCheck;
  readonly open: readonly OpenFailure[];
}

/** What came of asking for a snapshot. */
export type SnapshotOutcome =
  | { readonly kind: 'checked'; readonly snapshot: GreenSnapshot }
  /** No check command is known for the project: nothing to run. */
  | { readonly kind: 'no-command'; readonly commit: string }
  /** colony could not run the check (git could not check the commit out). */
  | { readonly kind: 'could-not-check'; readonly commit: string; readonly command: string; readonly reason: string }
  /** The run is stopping. */
  | { readonly kind: 'stopped' };

/** A failure a red snapshot showed that no passing snapshot has cleared yet. */
export interface OpenFailure {
  /** Its first bad commit, or `before-the-run`: what makes it one failure. */
  readonly key: string;
  /** The failure lines it brought (more may join as later snapshots show them). */
  lines: string[];
  /** Where it came from; null for lines no commit could be found for (key `untraced-<snapshot>`). */
  readonly report: FailureReport | null;
}

/** What the green loop knows between snapshots. */
export interface GreenState {
  /** The last commit a snapshot passed on in this run; null before the first. */
  good: string | null;
  lastSnapshot: { commit: string; passed: boolean } | null;
  /** When the last snapshot was taken; null before the first. */
  readonly lastSnapshotAt: number | null;
  /**
   * The check the last snapshot ran: a later commit whose files no longer name one (a broken
   * package.json) is checked with it, and fails, rather than counting as having no check.
   */
  command: string | null;
  open: OpenFailure[];
  /** Failures already told to a planner, by key: each is told once. */
  readonly reported: Set<string>;
  /**
   * Failure lines of open failures a red snapshot no longer showed, by the commit of that
   * snapshot: fixed there while main stayed red for other reasons. Lines that come back were
   * brought again after that commit, so their bisect starts there. Cleared by a pass.
   */
  readonly fixedAt: Map<string, string>;
}

export interface FailureReport {
  readonly origin: FailureOrigin;
  readonly culprit: Culprit;
  readonly subject: string;
}

/** Where a failure of a red snapshot came from: the commit that brought its lines, found by bisecting. */
export interface FailureOrigin {
  /** The first commit whose check shows these lines; null when the run's first commit already did. */
  readonly firstBad: string | null;
  /**
   * Where the bisect started: the last passing commit, the run's first commit, or the origin of
   * the snapshot's earlier failure (which shows none of these lines); null for a failure older than the run.
   */
  readonly good: string | null;
  /** The snapshot's failure lines this commit brought. */
  readonly lines: readonly string[];
  /** Commits the check ran on to find it. */
  readonly checks: number;
  readonly durationMs: number;
}

/** Who brought a commit onto main: the task whose merge landed it, the agent that merged, and the planner that owns the task. */
export interface Culprit {
  readonly taskId: string | null;
  readonly title: string | null;
  readonly agentId: string | null;
  readonly plannerTaskId: string | null;
}
