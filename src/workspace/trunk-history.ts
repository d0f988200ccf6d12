import { parseCommit } from './git-objects.js';
import type { ObjectStore } from './object-store.js';

/**
 * The commits known to be on the trunk's first-parent line, learnt as the trunk is seen to
 * move. A workspace's commits are replayed from the first one whose parent is here. Colony
 * moves the trunk only forward, so a commit once seen on it stays an ancestor; if the trunk is
 * ever found not to reach what was known (history rewritten by hand), the record starts over.
 */
export interface TrunkHistory {
  /** Learns the trunk's line up to `tip` (walking back to what is already known, at most `WALK_LIMIT` commits). */
  advanceTo(store: ObjectStore, tip: string): Promise<void>;
  has(commit: string): boolean;
}

const WALK_LIMIT = 2_000;

class FirstParentHistory implements TrunkHistory {
  private readonly known = new Set<string>();

  async advanceTo(store: ObjectStore, tip: string): Promise<void> {
    if (this.known.has(tip)) return;
    const walked: string[] = [];
    let current: string | undefined = tip;
    let reachedKnown = false;
    while (current !== undefined && walked.length < WALK_LIMIT) {
      if (this.known.has(current)) {
        reachedKnown = true;
        break;
      }
      walked.push(current);
      const object = await store.read(current);
      if (object === null || object.type !== 'commit') break;
      current = parseCommit(object.content).parents[0];
    }
    // Not reaching what was known means the trunk was rewritten or jumped further than the walk:
    // forgetting costs only a slower merge, keeping a stale commit could replay the wrong changes.
    if (!reachedKnown) this.known.clear();
    for (const commit of walked) this.known.add(commit);
  }

  has(commit: string): boolean {
    return this.known.has(commit);
  }
}

export function createTrunkHistory(): TrunkHistory {
  return new FirstParentHistory();
}
