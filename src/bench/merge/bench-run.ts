import type { Repository } from '../../workspace/git/repository.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { ChangeMix } from './planned-change.js';
import type { RunTally } from './run-tally.js';

/** What both modes share while a run goes. */
export interface BenchRun {
  readonly repo: Repository;
  /** A directory of the run's own for scratch files (the integrator's index). */
  readonly scratchDir: string;
  /** One per merger; merger k works in `workspaces[k]`. */
  readonly workspaces: readonly Workspace[];
  readonly mix: ChangeMix;
  /** How long an agent takes to resolve a conflict that reaches it. */
  readonly resolveMs: number;
  readonly seed: number;
  /** Aborted when the run's window closes (or the user stops it): mergers start no new change. */
  readonly stop: AbortSignal;
  readonly tally: RunTally;
  /** Milliseconds since the run's window opened. */
  elapsed(): number;
}

/** Waits `ms`, as an agent resolving a conflict would; false when the run stopped first. */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (completed: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(completed);
    };
    const onAbort = (): void => finish(false);
    const timer = setTimeout(() => finish(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
