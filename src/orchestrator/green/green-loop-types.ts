import type { ColonyEvent } from '../../events/event-types.js';
import type { SnapshotCheck } from './green-snapshot.js';
import type { OpenFailure } from './green-state.js';

/* What the green loop (green-loop.ts) answers with, and the loop itself as the run sees it. */

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
  observe(event: ColonyEvent): void;
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
