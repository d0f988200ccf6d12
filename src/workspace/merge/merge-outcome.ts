import type { EventBody } from '../../events/event-types.js';
import { errorMessage } from '../../errors/error-message.js';
import type { ConflictSettler } from '../git/rebase-state.js';

/**
 * How one `mergeToMain` call ended.
 * - landed: main now points at `commit`, whose first parent chain leads to `mainBefore`;
 *   `files` changed between the two.
 * - conflicted: the workspace's changes clash with main at `mainBefore`. A rebase is left
 *   in progress in the workspace with conflict markers in `files`; edit them, then call
 *   `mergeToMain` again. Also returned when a resolution still holds markers (then `files`
 *   lists those).
 * - nothing-to-merge: no change beyond what main already has.
 * - check-failed: the merge check failed on the work replayed onto main at `mainBefore`;
 *   the workspace now holds that replayed work (main's changes and its own), so the agent
 *   can fix it there and merge again. Main is untouched.
 * - failed: git could not do what was needed; `error` says what and what to do.
 */
export type MergeOutcome =
  | {
      readonly status: 'landed';
      readonly commit: string;
      readonly mainBefore: string;
      readonly attempts: number;
      readonly files: string[];
      /** Files whose conflicts colony settled itself because both sides only appended lines. */
      readonly autoResolved: string[];
      /** Milliseconds spent waiting for main's turn (other merges landing first). */
      readonly waitMs: number;
      /**
       * Set when the work landed but the workspace could not be brought to the new main
       * commit (git's reason); its next merge catches up (the agent cannot: git's metadata is
       * read-only in its sandbox).
       */
      readonly workspaceBehind?: string;
    }
  | {
      readonly status: 'conflicted';
      readonly files: string[];
      readonly mainBefore: string;
      /** Why colony did not settle files it settles when it can (a package.json and its lockfile). */
      readonly unsettled?: string;
    }
  | { readonly status: 'nothing-to-merge'; readonly reason: string }
  | { readonly status: 'check-failed'; readonly output: string; readonly mainBefore: string }
  | { readonly status: 'failed'; readonly error: string };

export interface MergeToMainOptions {
  /** The commit message for changes not yet committed in the workspace. */
  readonly message: string;
  /** How many times to re-read main after losing a race to another merge; default 10. */
  readonly maxAttempts?: number;
  /** Receives merge.attempted, merge.conflicted and merge.landed as they happen. */
  readonly record?: (event: EventBody) => void;
  /** Milliseconds since the epoch, for the durations in events; default Date.now. */
  readonly now?: () => number;
  /**
   * A check run in the workspace on its work replayed onto main, before main moves
   * (`--merge-check`). When main moves while it runs, the work is replayed again and
   * checked again. Off when absent.
   */
  readonly check?: MergeCheck;
  /**
   * Told, inside main's turn and immediately before each compare-and-swap of main
   * (every attempt, on either path), which commit main is about to move to. The caller
   * records the intent and makes it durable before returning, so that after a crash
   * `settleInterruptedMerge` can tell whether the merge landed. Awaited inside main's turn:
   * nothing else moves main in this process meanwhile. If it throws or rejects, main is not
   * moved and the merge ends as 'failed', the work left committed on the workspace's branch.
   */
  readonly onIntent?: (intent: MergeIntent) => Promise<void> | void;
  /**
   * Settles conflicts the rebase path meets after the append-only ones, before any is handed
   * to the agent: a package.json and lockfile both sides changed (`lockfileConflictSettler`). None
   * when absent.
   */
  readonly settleConflicts?: ConflictSettler;
}

/** A compare-and-swap of main about to be attempted: from `mainBefore` to `commit`, landing `branch`. */
export interface MergeIntent {
  /** The commit main will point at if the swap succeeds. */
  readonly commit: string;
  /** The commit main must still point at for the swap to succeed. */
  readonly mainBefore: string;
  /** The workspace's branch whose work `commit` holds. */
  readonly branch: string;
}

/** Runs the merge check in `workspacePath`; a failure carries the output to show the agent. */
export type MergeCheck = (workspacePath: string) => Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }>;


/**
 * Hands `intent` to the caller's `onIntent` just before a swap. Returns the outcome to end the
 * merge with when the caller could not record it (main must not move then), or null to
 * go on with the swap.
 */
export async function announceIntent(onIntent: MergeToMainOptions['onIntent'], intent: MergeIntent, mainBranch: string): Promise<MergeOutcome | null> {
  if (onIntent === undefined) return null;
  try {
    await onIntent(intent);
    return null;
  } catch (error) {
    const reason = errorMessage(error);
    return {
      status: 'failed',
      error: `colony could not record the merge of ${intent.branch} before landing it (${reason}), so ${mainBranch} was not moved. The work is committed in the workspace; call merge again.`,
    };
  }
}
