import type { Repository } from '../git/repository.js';
import { createSerialQueue } from '../git/serial-queue.js';

const serializeTrunk = createSerialQueue();

/**
 * Runs `action` when no other merge in this process is between reading the trunk and moving
 * it: first come, first served, so no merge starves however many run at once.
 */
export function withTrunkTurn<T>(repo: Repository, action: () => Promise<T>): Promise<T> {
  return serializeTrunk(`${repo.gitDir}\0${repo.trunk}`, action);
}
