/**
 * Runs actions one at a time per key, in the order they asked (first come, first served), and
 * any number at once across keys. Process-wide on purpose: what it guards (a repository's
 * worktree records, its main) is shared by everything in the process that works on it.
 */
export function createSerialQueue(): <T>(key: string, action: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<void>>();
  return async (key, action) => {
    const previous = tails.get(key) ?? Promise.resolve();
    let release = (): void => undefined;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    tails.set(key, tail);
    await previous;
    try {
      return await action();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
