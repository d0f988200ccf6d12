import type { Repository } from '../git/repository.js';
import { createSerialQueue } from '../git/serial-queue.js';

const serializeMain = createSerialQueue();

/**
 * Runs `action` when no other merge in this process is between reading main and moving
 * it: first come, first served, so no merge starves however many run at once.
 */
export function withMainTurn<T>(repo: Repository, action: () => Promise<T>): Promise<T> {
  return serializeMain(`${repo.gitDir}\0${repo.mainBranch}`, action);
}
