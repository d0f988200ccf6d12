import type { EventBody, EventData } from '../../events/event-types.js';
import { missingWork, startTrunkWatch, type TrunkLanding, type TrunkMove } from '../../workspace/checkout/trunk-watch.js';
import { landsOnCheckout, type Repository } from '../../workspace/git/repository.js';
import { startCheckoutSync } from '../setup/checkout-sync.js';
import { shellWord } from '../../errors/shell-word.js';

/** What a run keeps an eye on around its trunk while it lands: the user's checkout, and moves by others. */
export interface TrunkKeeper {
  /** After each landing: the checkout brought up to it (when the trunk is checked out), then the trunk's reflog read. */
  landed(landing: EventData<'merge.landed'>): void;
  /**
   * After the last landing: the checkout's last update, and whether work the trunk lost to
   * someone else's move is still missing; each null when all is well, else what to do.
   */
  finish(): Promise<{ readonly checkoutProblem: string | null; readonly trunkProblem: string | null }>;
}

export interface TrunkKeeperOptions {
  readonly repo: Repository;
  /** The trunk's commit as the run (or this session of it) starts; the checkout is clean there. */
  readonly startCommit: string;
  /** The run's landings before this session (a resumed run's), oldest first. */
  readonly earlier: readonly TrunkLanding[];
  readonly record: (body: EventBody) => void;
}

/**
 * Starts keeping the trunk: a trunk the user has checked out is brought up to every landing,
 * so no commit of theirs reverts landed work; every trunk is watched for moves by others that
 * take landed work off it (a reset, an amend, a commit from an index behind the landings),
 * each recorded as `trunk.rewritten` naming the commit, not replayed in silence.
 */
export async function startTrunkKeeper(options: TrunkKeeperOptions): Promise<TrunkKeeper> {
  const { repo, record } = options;
  const checkout = landsOnCheckout(repo) ? startCheckoutSync(repo, options.startCommit) : null;
  const watch = await startTrunkWatch(repo, options.earlier);
  const moves: TrunkMove[] = [];
  let queue: Promise<void> = Promise.resolve();
  const look = async () => {
    for (const move of await watch.check()) {
      moves.push(move);
      record({ type: 'trunk.rewritten', data: { ...move, branch: repo.mainBranch, dropped: [...move.dropped], files: [...move.files] } });
    }
  };
  return {
    landed(landing) {
      watch.landed(landing);
      queue = queue.then(async () => {
        await checkout?.afterLanding();
        await look();
      });
    },
    async finish() {
      await queue;
      await look();
      const checkoutProblem = (await checkout?.finish()) ?? null;
      const last = watch.lastLanded();
      if (moves.length === 0 || last === null) return { checkoutProblem, trunkProblem: null };
      return { checkoutProblem, trunkProblem: describeMissing(repo, await missingWork(repo, moves, last), last) };
    },
  };
}

/** What the user must do to put back landed work still missing from the trunk, or null when none is. */
function describeMissing(repo: Repository, missing: Awaited<ReturnType<typeof missingWork>>, last: string): string | null {
  const trunk = shellWord(repo.mainBranch);
  const parts: string[] = [];
  if (missing.commits.length > 0) {
    const shown = missing.commits.slice(0, 3).map((commit) => commit.slice(0, 12));
    parts.push(
      `${missing.commits.length} landed commit${missing.commits.length === 1 ? ' is' : 's are'} no longer on ${repo.mainBranch} (${shown.join(', ')}${missing.commits.length > 3 ? ', …' : ''}) after it was moved by someone else. ` +
        `Bring them back with \`git cherry-pick ${missing.commits.slice().reverse().map((commit) => commit.slice(0, 12)).join(' ')}\` on ${repo.mainBranch}, or leave them out if the move was meant to drop them.`,
    );
  }
  if (missing.files.length > 0) {
    parts.push(
      `${missing.files.length} landed file${missing.files.length === 1 ? ' is' : 's are'} still as they were before landing after a commit that was not colony's (${missing.files.slice(0, 4).join(', ')}${missing.files.length > 4 ? ', …' : ''}). ` +
        `Put them back with \`git restore --source=${last.slice(0, 12)} -- ${missing.files.map(shellWord).join(' ')}\` on ${trunk}, then commit.`,
    );
  }
  return parts.length === 0 ? null : parts.join(' ');
}
