import type { EventStore } from './event-store.js';

/**
 * Durable batching: many agents each make their events durable before their next tool call
 * runs, and one synced commit can cover them all. The returned `flush` resolves once every
 * event appended before the call is durable; callers in the same turn of the event loop share
 * one write and one sync, made just after that turn. A write that fails rejects every caller
 * of that batch, and the events stay buffered for the next one (see `EventStore.flush`).
 */
export function createGroupFlush(store: EventStore): () => Promise<void> {
  let batch: Promise<void> | null = null;
  return () => {
    if (batch !== null) return batch;
    batch = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        batch = null;
        store.flush().then(resolve, reject);
      });
    });
    return batch;
  };
}
