/**
 * In-process wake-ups: an agent or the runner waits on a key (a task id, the runner) until
 * someone wakes it, a timeout passes, or its signal aborts. The timeout is the fallback that
 * notices what another process changed in a shared store.
 */
/** The key the runner waits on for new tasks. */
export const RUNNER_WAKEUP = 'runner';

export class Wakeups {
  readonly #waiters = new Map<string, Set<() => void>>();

  wake(key: string): void {
    const waiters = this.#waiters.get(key);
    if (waiters === undefined) return;
    this.#waiters.delete(key);
    for (const resolve of waiters) resolve();
  }

  wait(key: string, signal: AbortSignal, timeoutMs: number): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        const waiters = this.#waiters.get(key);
        waiters?.delete(done);
        if (waiters?.size === 0) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      let waiters = this.#waiters.get(key);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiters.set(key, waiters);
      }
      waiters.add(done);
    });
  }
}
