import type { Repository } from '../../workspace/git/repository.js';
import type { EventBody } from '../../events/event-types.js';
import { followOrigin } from '../../workspace/git/trunk-origin.js';
import { withMainTurn } from '../../workspace/merge/main-turn.js';
import { resolveBranch } from '../../workspace/workspace.js';
import { errorMessage } from '../../errors/error-message.js';
import type { TrunkLanding } from '../../workspace/checkout/trunk-watch.js';

/** How often a run whose trunk lives on an origin brings its own copy up to it. */
const FOLLOW_EVERY_MS = 1_000;

export interface OriginFollowerOptions {
  readonly repo: Repository;
  /** Told of each move of the trunk here that following made (other hosts' landings), in order. */
  readonly moved: (landing: TrunkLanding) => void;
  /** Told when the origin cannot be followed (unreachable, or its trunk moved back), once per new reason. */
  readonly problem: (body: Extract<EventBody, { type: 'trunk.unfollowed' }>) => void;
  readonly everyMs?: number;
}

export interface OriginFollower {
  /** Follows once more, so the trunk here has every landing, and stops; later calls wait for the first. */
  stop(): Promise<void>;
}

/**
 * Keeps the run's trunk in its repository up to the origin's (none when it has no origin), where other hosts land: planners'
 * views, the green loop and the user's checkout at the end all read it here. Each look takes
 * main's turn, so it never comes between a landing's push and its move of the trunk here.
 */
export function startOriginFollower(options: OriginFollowerOptions): OriginFollower | null {
  const { repo } = options;
  const origin = repo.origin;
  if (origin === undefined) return null;
  const problem = (reason: string) => options.problem({ type: 'trunk.unfollowed', data: { origin: origin.url, reason } });
  let lastProblem: string | null = null;
  const follow = (): Promise<void> =>
    withMainTurn(repo, async () => {
      const before = await resolveBranch(repo, repo.mainBranch);
      const followed = await followOrigin(repo, origin);
      if (!followed.ok) {
        if (followed.error !== lastProblem) problem(followed.error);
        lastProblem = followed.error;
        return;
      }
      lastProblem = null;
      if (followed.commit !== before) options.moved({ commit: followed.commit, mainBefore: before, files: [] });
    });
  // One look at a time: a slow origin skips beats rather than queueing them.
  let looking: Promise<void> | null = null;
  const timer = setInterval(() => {
    looking ??= follow()
      .catch((error: unknown) => problem(errorMessage(error)))
      .finally(() => {
        looking = null;
      });
  }, options.everyMs ?? FOLLOW_EVERY_MS);
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      clearInterval(timer);
      stopped ??= (async () => {
        await looking;
        await follow().catch((error: unknown) => problem(errorMessage(error)));
      })();
      return stopped;
    },
  };
}
