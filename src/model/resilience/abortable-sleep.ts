/**
 * Waits `ms` milliseconds. It must settle early (resolving or rejecting, either is fine) when
 * `signal` aborts, so a cancelled call does not sit out its backoff.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout that ends early, resolving, when the signal aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal?.addEventListener('abort', finish, { once: true });
  });
}
