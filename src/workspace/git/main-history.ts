import { parseCommit } from './git-objects.js';
import type { ObjectStore } from './object-store.js';

/**
 * The commits known to be on main's first-parent line, learnt as main is seen to
 * move. A workspace's commits are replayed from the first one whose parent is here. Colony
 * moves main only forward, so a commit once seen on it stays an ancestor; when main
 * is found anywhere but ahead of the tip last seen (reset or rewritten by hand), the record
 * starts over from the new tip.
 */
export interface MainHistory {
  /** Learns main's line up to `tip` (walking back to what is already known, at most `WALK_LIMIT` commits). */
  advanceTo(store: ObjectStore, tip: string): Promise<void>;
  has(commit: string): boolean;
}

const WALK_LIMIT = 2_000;

class FirstParentHistory implements MainHistory {
  private readonly known = new Set<string>();
  private tip: string | null = null;

  async advanceTo(store: ObjectStore, tip: string): Promise<void> {
    if (tip === this.tip) return;
    const walked: string[] = [];
    let current: string | undefined = tip;
    let movedForward = false;
    while (current !== undefined && walked.length < WALK_LIMIT) {
      if (current === this.tip) {
        movedForward = true;
        break;
      }
      walked.push(current);
      const object = await store.read(current);
      if (object === null || object.type !== 'commit') break;
      current = parseCommit(object.content).parents[0];
    }
    // When main did not move forward from the tip last seen (reset, rewritten, or further
    // than the walk), everything known is doubtful: forgetting costs only slower merges,
    // keeping a commit no longer on main could replay onto the wrong base.
    if (!movedForward) this.known.clear();
    for (const commit of walked) this.known.add(commit);
    this.tip = tip;
  }

  has(commit: string): boolean {
    return this.known.has(commit);
  }
}

export function createMainHistory(): MainHistory {
  return new FirstParentHistory();
}
