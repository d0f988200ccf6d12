import { describe, expect, it } from 'vitest';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import { openSqliteTaskStore } from '../sqlite/sqlite-task-store.js';
import { createRedactingTaskStore } from './redacting-task-store.js';
import { describeTaskStoreConformance } from '../testing/task-store.conformance.js';
import { childTask, createdTask, handoffOf, rootTask, RUN_ID } from '../testing/task-store-fixtures.js';
import { sqliteStoreUnderTest } from '../testing/sqlite-store-under-test.js';

const redactor = createSecretRedactor(['sk-planted-0123456789']);

describeTaskStoreConformance('redacting', () => sqliteStoreUnderTest('colony-tasks-', (path) => createRedactingTaskStore(openSqliteTaskStore(path), redactor)));

describe('createRedactingTaskStore', () => {
  it('keeps secrets out of briefs, handoffs and inbox messages', async () => {
    const underTest = await sqliteStoreUnderTest('colony-tasks-', (path) => createRedactingTaskStore(openSqliteTaskStore(path), redactor));
    try {
      const { store } = underTest;
      const root = createdTask(await store.createTask(rootTask(), 1));
      const child = createdTask(await store.createTask(childTask('task-1', root.id, 'worker', { body: 'use sk-planted-0123456789' }), 2));
      await store.sendMessage(RUN_ID, root.id, 'see https://me:sk-planted-0123456789@host.invalid', 3);
      const claimed = await store.claim({ runId: RUN_ID, holder: 'runner', kinds: ['worker'], now: 4, leaseMs: 1_000 });
      expect(claimed?.id).toBe(child.id);
      await store.complete(child.id, { holder: 'runner', attempt: 1 }, handoffOf('failed', 'the provider said sk-planted-0123456789'), 5);
      const everything = JSON.stringify([await store.listTasks(RUN_ID), await store.takeInbox(root.id)]);
      expect(everything).toContain('[redacted]');
      expect(everything).not.toContain('sk-planted');
    } finally {
      await underTest.cleanup();
    }
  });
});
