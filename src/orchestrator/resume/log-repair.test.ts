import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import { childTask, createdTask, handoffOf, RUN_ID, rootTask } from '../../store/testing/task-store-fixtures.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { repairLogFromTasks } from './log-repair.js';

describe('repairing the log from the task table after a crash', () => {
  let dir: string;
  let tasks: TaskStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colony-log-repair-'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
  });

  afterEach(async () => {
    await tasks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records the creations and deliveries the table holds and the log missed, once, under the right agents', async () => {
    const events = createMemoryEventStore();
    const root = createdTask(await tasks.createTask(rootTask(), 1));
    const logged = createdTask(await tasks.createTask(childTask('task-logged', root.id), 2));
    // The crash fell between each of these table writes and its event.
    const unlogged = createdTask(await tasks.createTask(childTask('task-unlogged', root.id, 'planner'), 3));
    for (const task of [root, logged]) {
      events.append({ type: 'task.created', data: { taskId: task.id, parentTaskId: task.parentTaskId, kind: task.kind, title: task.title, scope: task.scope, retryOf: null }, runId: RUN_ID, agentId: 'system' });
    }
    const claimed = await tasks.claim({ runId: RUN_ID, holder: 'runner-1', kinds: ['worker'], now: 10, leaseMs: 1_000 });
    expect(claimed?.id).toBe(logged.id);
    expect((await tasks.complete(logged.id, { holder: 'runner-1', attempt: 1 }, handoffOf('done', 'built it'), 11)).ok).toBe(true);

    expect(await repairLogFromTasks(events, tasks, RUN_ID)).toBe(2);
    const repaired = await events.read({ afterSeq: 2 });
    // In the table's order of the tasks.
    expect(repaired).toMatchObject([
      { type: 'handoff.delivered', agentId: 'system', data: { taskId: logged.id, parentTaskId: root.id, status: 'done' } },
      { type: 'task.created', agentId: unlogged.createdBy, data: { taskId: unlogged.id, parentTaskId: root.id, kind: 'planner', scope: unlogged.scope } },
    ]);
    // The log now agrees with the table: a second pass adds nothing.
    expect(await repairLogFromTasks(events, tasks, RUN_ID)).toBe(0);
    expect(await events.lastSeq()).toBe(4);
  });
});
