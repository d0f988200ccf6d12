import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { describeTaskStoreConformance } from '../testing/task-store.conformance.js';
import { RUN_ID, childTask, handoffOf, rootTask } from '../testing/task-store-fixtures.js';
import { describeWithPostgres, dropSchema, freshSchema, postgresStoreUnderTest, usePostgresCluster } from '../testing/postgres-store-under-test.js';
import type { TaskChange } from './postgres-task-rows.js';
import { openPostgresTaskStore } from './postgres-store.js';
import type { PostgresTaskStore } from './postgres-task-store.js';

const ROOT = rootTask().id;

describeWithPostgres('the PostgreSQL task store', () => {
  const cluster = usePostgresCluster();

  describeTaskStoreConformance('postgres', async () =>
    postgresStoreUnderTest(await cluster().database('task_conformance'), (url, schema) => openPostgresTaskStore({ url, schema })),
  );

  const opened: PostgresTaskStore[] = [];
  let schema = '';
  let url = '';

  /** Another store on this test's schema, with a pool of its own, as another process would open it. */
  async function open(poolSize = 4): Promise<PostgresTaskStore> {
    url = await cluster().database('task_store');
    if (schema === '') schema = freshSchema();
    const store = await openPostgresTaskStore({ url, schema, poolSize });
    opened.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    if (schema !== '') await dropSchema(url, schema);
    schema = '';
  });

  it('hands each task to one claimer of many, claiming at once through several pools, and delivers each handoff once', async () => {
    const taskCount = 120;
    const setup = await open();
    await setup.createTask(rootTask(), 100);
    for (let index = 0; index < taskCount; index += 1) await setup.createTask(childTask(`worker-${index}`, ROOT), 100 + index);
    const stores = [await open(3), await open(3), await open(3)];
    const runner = async (holder: string, store: PostgresTaskStore): Promise<string[]> => {
      const completed: string[] = [];
      for (;;) {
        const task = await store.claim({ runId: RUN_ID, holder, kinds: ['worker'], now: 1_000, leaseMs: 600_000 });
        if (task === null) return completed;
        const result = await store.complete(task.id, { holder, attempt: task.attempt }, handoffOf('done', `Completed by ${holder}.`), 2_000);
        if (!result.ok) throw new Error(result.error);
        completed.push(task.id);
      }
    };
    // Four runners per pool, twelve in all, each claiming as fast as it can.
    const reports = await Promise.all(stores.flatMap((store, pool) => [0, 1, 2, 3].map((index) => runner(`runner-${pool}-${index}`, store))));
    const completed = reports.flat();
    expect(completed).toHaveLength(taskCount);
    expect(new Set(completed).size).toBe(taskCount);
    expect(reports.filter((report) => report.length > 0).length).toBeGreaterThan(1);
    const workers = (await setup.listTasks(RUN_ID)).filter((task) => task.kind === 'worker');
    expect(workers.every((task) => task.status === 'done' && task.attempt === 1)).toBe(true);
    const delivered = await setup.deliveredHandoffs(RUN_ID);
    expect(delivered).toHaveLength(taskCount);
    expect(delivered.map((message) => message.seq)).toEqual(Array.from({ length: taskCount }, (_, index) => index + 1));
  });

  it('numbers inbox messages in commit order when many are left at once', async () => {
    const stores = [await open(), await open()];
    const [first] = stores;
    await first?.createTask(rootTask(), 100);
    await Promise.all(stores.flatMap((store, pool) => Array.from({ length: 20 }, (_, index) => store.sendMessage(RUN_ID, ROOT, `message ${pool}-${index}`, 200))));
    const messages = (await first?.takeInbox(ROOT)) ?? [];
    expect(messages.map((message) => message.seq)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
  });

  it('tells listeners of published, given back and paused tasks, in any process, once committed', async () => {
    const writer = await open();
    const listener = await open();
    const heard: TaskChange[] = [];
    const stop = await listener.onTaskChange((change) => heard.push(change));
    await writer.createTask(rootTask(), 100);
    await writer.createTask(childTask('worker-1', ROOT), 110);
    const claimed = await writer.claim({ runId: RUN_ID, holder: 'runner-a', kinds: ['worker'], now: 1_000, leaseMs: 1_000 });
    expect(await writer.release('worker-1', { holder: 'runner-a', attempt: claimed?.attempt ?? 0 })).toBe(true);
    await writer.setAndon(ROOT, true, 1_100);
    await writer.setRunAndon(RUN_ID, true, 'lunch', 1_200);
    await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(5);
    expect(heard.map((change) => change.change)).toEqual(['created', 'created', 'released', 'andon', 'andon']);
    expect(heard.every((change) => change.runId === RUN_ID)).toBe(true);
    stop();
    await writer.createTask(childTask('worker-2', ROOT), 120);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard).toHaveLength(5);
  });

  it('refuses a second delivery of one handoff at the schema level', async () => {
    const store = await open();
    await store.createTask(rootTask(), 100);
    await store.createTask(childTask('worker-1', ROOT), 110);
    await store.claim({ runId: RUN_ID, holder: 'runner-a', kinds: ['worker'], now: 1_000, leaseMs: 1_000 });
    await store.complete('worker-1', { holder: 'runner-a', attempt: 1 }, handoffOf('done', 'Done.'), 1_100);
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await expect(
        client.query("INSERT INTO inbox (seq, run_id, recipient_task_id, from_task_id, handoff, created_at) VALUES (99, $1, $2, 'worker-1', '{}', 1)", [RUN_ID, ROOT]),
      ).rejects.toThrow(/inbox_one_handoff_per_task/);
    } finally {
      await client.end();
    }
    expect((await store.takeInbox(ROOT)).map((message) => message.fromTaskId)).toEqual(['worker-1']);
  });
});
