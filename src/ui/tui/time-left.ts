/** How far the run's tasks are: closed out of all, and a guess at the time the rest take. */
export interface TaskProgress {
  readonly closed: number;
  readonly total: number;
  /** Closed out of all, 0 to 1; 0 while there are no tasks. */
  readonly share: number;
  /** The estimate of the time left, in milliseconds; null when there is none to make. */
  readonly leftMs: number | null;
}

export interface TaskProgressInput {
  /** When each closed task of the tree closed, in any order. */
  readonly closedAt: readonly number[];
  /** Tasks of the tree, closed or not. */
  readonly total: number;
  /** The run's clock: now for a live run, the replay's moment for a replay. */
  readonly now: number;
  readonly startedAt: number;
  /** False once the run ended: an ended run has no time left. */
  readonly running: boolean;
}

/** Tasks closed per minute are counted over this much of the recent past. */
export const ESTIMATE_WINDOW_MS = 10 * 60_000;
/** Fewer tasks closed in the window than this make no estimate: one or two say nothing of a rate. */
export const ESTIMATE_MIN_CLOSED = 3;

/**
 * Tasks closed out of all, and the time left at the rate tasks closed over the last ten
 * minutes (or since the start, when the run is younger): the open and running tasks divided
 * by that rate. Planners publish tasks as they go, so the estimate is of the tasks there are
 * now; it moves as more are published. No estimate before three tasks closed in the window,
 * none once every task closed, and none after the run ended.
 */
export function taskProgress({ closedAt, total, now, startedAt, running }: TaskProgressInput): TaskProgress {
  const closed = closedAt.length;
  const share = total === 0 ? 0 : closed / total;
  const remaining = total - closed;
  const from = Math.max(startedAt, now - ESTIMATE_WINDOW_MS);
  const recent = closedAt.filter((at) => at > from && at <= now).length;
  const spanMs = now - from;
  if (!running || remaining <= 0 || recent < ESTIMATE_MIN_CLOSED || spanMs <= 0) return { closed, total, share, leftMs: null };
  return { closed, total, share, leftMs: Math.round((remaining * spanMs) / recent) };
}

/** An estimate as a person reads it, no more precise than it is: `<1m`, `~7m`, `~2h10m`. */
export function roughDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return '<1m';
  if (minutes < 60) return `~${minutes}m`;
  return `~${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
