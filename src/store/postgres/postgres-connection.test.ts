import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { toolStartedInput, withoutSeq } from '../testing/event-store-fixtures.js';
import { RUN_ID, childTask, rootTask } from '../testing/task-store-fixtures.js';
import { freePort } from '../testing/postgres-cluster.js';
import { describeWithPostgres, dropSchema, freshSchema, usePostgresCluster } from '../testing/postgres-store-under-test.js';
import { PostgresConnection } from './postgres-connection.js';
import type { Queryable } from './postgres-connection.js';
import { openPostgresEventLog } from './postgres-event-store.js';
import { CommitOutcomeUnknownError } from './postgres-failures.js';
import { migratePostgresSchemaPart } from './postgres-migrations.js';
import { POSTGRES_EVENT_LOG_SCHEMA } from './postgres-schema.js';
import { openPostgresStore } from './postgres-store.js';
import type { PostgresStore } from './postgres-store.js';

/** What `promise` rejected with, as the message and its cause's message; fails the test when it resolved. */
async function failureText(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? `${error.message}\n${error.cause instanceof Error ? error.cause.message : ''}` : String(error);
  }
  throw new Error('expected the operation to fail');
}

/** A connection whose next commit lands but is reported lost, as when the network drops just after COMMIT reached the server. */
class CommitLostOnce extends PostgresConnection {
  loseNext = false;

  override async transaction<Result>(work: (client: Queryable) => Promise<Result>): Promise<Result> {
    const result = await super.transaction(work);
    if (!this.loseNext) return result;
    this.loseNext = false;
    throw new CommitOutcomeUnknownError('The connection broke while a transaction was committing.', new Error('Connection terminated unexpectedly'));
  }
}

describeWithPostgres('a PostgreSQL store whose connection fails', () => {
  const cluster = usePostgresCluster();
  const stores: PostgresStore[] = [];
  const schemas: string[] = [];
  let url = '';

  async function open(retryMs = 30_000): Promise<PostgresStore> {
    url = await cluster().database('connections');
    const schema = schemas[0] ?? freshSchema();
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = await openPostgresStore({ url, schema, retryMs });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await dropSchema(url, schema);
  });

  it('names the host and database when the password is wrong, with the password hidden', async () => {
    const right = await cluster().database('connections');
    const wrongPassword = 'not-the-password-4711';
    const wrong = right.replace(`:${cluster().password}@`, `:${wrongPassword}@`);
    const text = await failureText(openPostgresStore({ url: wrong, retryMs: 200 }));
    expect(text).toMatch(/Could not open a connection to database "connections" on 127\.0\.0\.1:\d+ \(postgres:\/\/colony:\*\*\*@127\.0\.0\.1:\d+\/connections\): password authentication failed/);
    expect(text).not.toContain(wrongPassword);
    expect(text).not.toContain(cluster().password);
  });

  it('once an operation has waited out the retry time in vain, tries the next ones once each until one gets through', async () => {
    const store = await open(3_000);
    await store.events.flush();
    await cluster().stopServer();
    let restarted = false;
    try {
      await expect(store.tasks.getTask('nothing')).rejects.toThrow(/trying again for \d s did not help/);
      // The server is gone, not blinking: the next operation does not wait the retry time again.
      const next = store.tasks.getTask('nothing').then(
        () => 'answered',
        () => 'refused',
      );
      // Trying again with its waits would take more than a second before it gave up.
      const outcome = await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve('still trying'), 1_000))]);
      expect(outcome).toBe('refused');
      await cluster().startServer();
      restarted = true;
      // Back: the first operation gets through, and with it the retries come back.
      await expect(store.tasks.getTask('nothing')).resolves.toBeNull();
    } finally {
      if (!restarted) await cluster().startServer();
    }
  });

  it('tries a refused connection again for the time it is given, then says where it could not reach', async () => {
    const port = await freePort();
    const nowhere = cluster().url('colony').replace(`:${cluster().port}/`, `:${port}/`);
    const started = Date.now();
    const text = await failureText(openPostgresStore({ url: nowhere, retryMs: 1_000 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(text).toMatch(new RegExp(`Could not reach PostgreSQL: database "colony" on 127\\.0\\.0\\.1:${port} \\(postgres://colony:\\*\\*\\*@127\\.0\\.0\\.1:${port}/colony\\).*ECONNREFUSED`, 's'));
    expect(text).not.toContain(cluster().password);
  });

  it('goes on through connections the server ended, and through a restart within the retry time', async () => {
    const store = await open();
    await store.tasks.createTask(rootTask(), 100);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const ended = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'colony' AND pid <> pg_backend_pid()");
      expect(ended.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    expect((await store.tasks.getTask(rootTask().id))?.status).toBe('open');
    await cluster().stopServer();
    const restart = new Promise((resolve) => setTimeout(resolve, 700)).then(() => cluster().startServer());
    const created = store.tasks.createTask(childTask('worker-1', rootTask().id), 110);
    await restart;
    expect(await created).toMatchObject({ ok: true, task: { id: 'worker-1' } });
    expect((await store.tasks.listTasks(RUN_ID)).map((task) => task.id)).toEqual([rootTask().id, 'worker-1']);
  });

  it('rejects an operation once the server stays away past the retry time, with the password hidden', async () => {
    const store = await open(500);
    await cluster().stopServer();
    try {
      const text = await failureText(store.tasks.listTasks(RUN_ID));
      expect(text).toMatch(/Could not reach PostgreSQL: database "connections" on 127\.0\.0\.1:\d+ \(postgres:\/\/colony:\*\*\*@/);
      expect(text).not.toContain(cluster().password);
    } finally {
      await cluster().startServer();
    }
  });

  it('writes a batch whose commit was reported lost only once, whatever the next flush finds', async () => {
    url = await cluster().database('connections');
    const schema = freshSchema();
    schemas.push(schema);
    const connection = new CommitLostOnce({ url, schema });
    connection.retain();
    try {
      await migratePostgresSchemaPart(connection, POSTGRES_EVENT_LOG_SCHEMA);
      const log = await openPostgresEventLog(connection);
      const first = log.append(toolStartedInput({ runId: RUN_ID, agentId: 'a' }, 1));
      connection.loseNext = true;
      await expect(log.flush()).rejects.toThrow(/committing.*1 unwritten event is kept in memory/s);
      const second = log.append(toolStartedInput({ runId: RUN_ID, agentId: 'a' }, 2));
      await log.flush();
      expect((await log.read()).map(withoutSeq)).toEqual([first, second]);
      await log.close();
    } finally {
      await connection.release();
    }
  });
});
