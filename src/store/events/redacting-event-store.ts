import type { SecretRedactor } from '../../events/secret-redaction.js';
import type { EventInput, EventStore } from './event-store.js';

/**
 * An event store that redacts every event on its way in (see `SecretRedactor`), so a secret
 * that slipped into a provider's error message, a command's output or a URL never reaches the
 * log, nor anyone reading it or told of it as it is appended. Everything else is `store`'s.
 */
export function createRedactingEventStore(store: EventStore, redactor: SecretRedactor): EventStore {
  return {
    append: (input: EventInput) => store.append(redactor.redactValue(input)),
    appendMany: (inputs: readonly EventInput[]) => store.appendMany(inputs.map((input) => redactor.redactValue(input))),
    flush: () => store.flush(),
    read: (query) => store.read(query),
    lastSeq: () => store.lastSeq(),
    close: () => store.close(),
  };
}
