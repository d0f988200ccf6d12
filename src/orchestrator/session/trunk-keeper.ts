import type { EventBody } from '../../events/event-types.js';
import { missingWork, putBackFiles, startTrunkWatch, type MissingWork, type TrunkLanding, type TrunkMove } from '../../workspace/checkout/trunk-watch.js';
import { runGit } from '../../workspace/git/git.js';
import { landsOnCheckout, type Repository } from '../../workspace/git/repository.js';
import { startCheckoutSync } from '../setup/checkout-sync.js';
import { shellWord } from '../../errors/shell-word.js';

/** What a run keeps an eye on around its trunk while it lands: the user's checkout, and moves by others. */
export interface TrunkKeeper {
  /** After each landing: the checkout brought up to it (when the trunk is checked out), then the trunk's reflog read. */
  landed(landing: TrunkLanding): void;
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
  // `before`: the commit the checkout was at before the latest update, so before any commit found now was made.
  const look = async (before: string | null) => {
    for (const move of await watch.check()) {
      moves.push(move);
      const restored = before !== null && (await madeFromStaleIndex(repo, move, before)) ? await putBackFiles(repo, move, putBackMessage(move)) : null;
      record({ type: 'trunk.rewritten', data: { ...move, branch: repo.mainBranch, dropped: [...move.dropped], files: [...move.files], ...(restored === null ? {} : { restored }) } });
      if (restored !== null) await checkout?.afterLanding();
    }
  };
  return {
    landed(landing) {
      watch.landed(landing);
      queue = queue.then(async () => {
        const before = checkout?.current() ?? null;
        await checkout?.afterLanding();
        await look(before);
      });
    },
    async finish() {
      await queue;
      await look(checkout?.current() ?? null);
      const checkoutProblem = (await checkout?.finish()) ?? null;
      if (moves.length === 0) return { checkoutProblem, trunkProblem: null };
      return { checkoutProblem, trunkProblem: describeMissing(repo, await missingWork(repo, moves)) };
    },
  };
}

/**
 * Whether a `reverted` commit is the artifact of a checkout colony had not yet brought up to
 * the landings it undid: none of them is in `before`, the commit the checkout was at, so the
 * index the commit was made from never held their files. A commit undoing landed work the
 * checkout did show is the user's choice, and is only reported.
 */
async function madeFromStaleIndex(repo: Repository, move: TrunkMove, before: string): Promise<boolean> {
  if (move.kind !== 'reverted' || move.dropped.length === 0) return false;
  for (const landing of move.dropped) {
    if ((await runGit(repo.root, ['merge-base', '--is-ancestor', landing, before])).code === 0) return false;
  }
  return true;
}

function putBackMessage(move: TrunkMove): string {
  return `Put back ${move.files.join(', ')}, which ${move.commit.slice(0, 12)} undid\n\nThat commit was made from an index colony had not yet brought up to the landing of ${move.dropped.map((commit) => commit.slice(0, 12)).join(', ')}.`;
}

/** What the user must do to put back landed work still missing from the trunk, or null when none is. */
function describeMissing(repo: Repository, missing: MissingWork): string | null {
  const trunk = shellWord(repo.mainBranch);
  const parts: string[] = [];
  if (missing.commits.length > 0) {
    const shown = missing.commits.slice(0, 3).map((commit) => commit.slice(0, 12));
    parts.push(
      `${missing.commits.length} landed commit${missing.commits.length === 1 ? ' is' : 's are'} no longer on ${repo.mainBranch} (${shown.join(', ')}${missing.commits.length > 3 ? ', …' : ''}) after it was moved by someone else. ` +
        `Bring them back with \`git cherry-pick ${missing.commits.slice().reverse().map((commit) => commit.slice(0, 12)).join(' ')}\` on ${trunk}, or leave them out if the move was meant to drop them.`,
    );
  }
  for (const { source, files } of missing.files) {
    parts.push(
      `${files.length} landed file${files.length === 1 ? ' is' : 's are'} still as they were before landing after a commit that was not colony's (${files.slice(0, 4).join(', ')}${files.length > 4 ? ', …' : ''}). ` +
        `Put them back with \`git restore --source=${source.slice(0, 12)} --staged --worktree -- ${files.map(shellWord).join(' ')}\` on ${trunk}, then commit, or leave them if that commit was meant to undo them.`,
    );
  }
  return parts.length === 0 ? null : parts.join(' ');
}
