import { describe, expect, it } from 'vitest';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import { describeEventStoreConformance } from '../testing/event-store.conformance.js';
import { createMemoryEventStore } from './memory-event-store.js';
import { createRedactingEventStore } from './redacting-event-store.js';

describeEventStoreConformance('redacting', async () => {
  const store = createRedactingEventStore(createMemoryEventStore(), createSecretRedactor(['sk-never-in-the-fixtures']));
  return { store, cleanup: () => store.close() };
});

describe('createRedactingEventStore', () => {
  it('stores and returns events with secrets and URL credentials replaced, in every string', async () => {
    const store = createRedactingEventStore(createMemoryEventStore(), createSecretRedactor(['sk-planted-0123456789']));
    const subject = { runId: 'run-1', agentId: 'agent-a' };
    const appended = store.append({
      ...subject,
      type: 'model.retried',
      data: { step: 1, attempt: 1, kind: 'server', message: 'echo: Bearer sk-planted-0123456789 at https://me:pw@host.invalid/v1', status: 500, delayMs: 0 },
    });
    const [many] = store.appendMany([{ ...subject, type: 'tool.ended', data: { step: 1, callId: 'c', name: 'run_command', ok: true, output: 'KEY=sk-planted-0123456789\n', durationMs: 1 } }]);
    expect(appended.data).toMatchObject({ message: 'echo: Bearer [redacted] at https://[redacted]@host.invalid/v1' });
    expect(many?.data).toMatchObject({ output: 'KEY=[redacted]\n' });
    expect(JSON.stringify(await store.read())).not.toMatch(/sk-planted|me:pw/);
  });
});
