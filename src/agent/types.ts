import type { EventBody } from '../events/event-types.js';

/**
 * Where the loop reports what it does. `flush` must make everything recorded so far durable;
 * it may return a promise (a recorder that waits out a full disk), which the loop awaits
 * before anything the events describe takes effect.
 */
export interface AgentRecorder {
  record(event: EventBody): void;
  flush(): void | Promise<void>;
}
