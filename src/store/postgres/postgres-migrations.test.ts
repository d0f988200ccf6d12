import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { toolStartedInput, withoutSeq } from '../testing/event-store-fixtures.js';
import { RUN_ID, childTask, rootTask } from '../testing/task-store-fixtures.js';
import { describeSchemaMigrations } from '../testing/schema-migrations.conformance.js';
import { describeWithPostgres, dropSchema, freshSchema, usePostgresCluster } from '../testing/postgres-store-under-test.js';
import { PostgresConnection } from './postgres-connection.js';
import { migratePostgresSchemaPart } from './postgres-migrations.js';
import type { PostgresSchemaPart } from './postgres-migrations.js';
import { POSTGRES_TASK_TABLE_SCHEMA } from './postgres-schema.js';
import { openPostgresEventStore, openPostgresStore } from './postgres-store.js';

describeWithPostgres('migrating a PostgreSQL schema', () => {
  const cluster = usePostgresCluster();

  describeSchemaMigrations('postgres', async () => {
    const database = await cluster().database('migrations_conformance');
    const schema = freshSchema();
    const connection = new PostgresConnection({ url: database, schema });
    connection.retain();
    const client = new pg.Client({ connectionString: database, options: `-c search_path=${schema}` });
    await client.connect();
    // The schema, empty, as a database another program had not touched yet.
    await client.query(`CREATE SCHEMA ${schema}`);
    return {
      migrate: (part) => migratePostgresSchemaPart(connection, part),
      query: async (sql) => (await client.query(sql)).rows,
      columns: async (table) => {
        const { rows } = await client.query<{ name: string }>(
          'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position',
          [schema, table],
        );
        return rows.map((row) => row.name);
      },
      cleanup: async () => {
        await client.end();
        await connection.release();
        await dropSchema(database, schema);
      },
    };
  });
  const connections: PostgresConnection[] = [];
  const schemas: string[] = [];
  let url = '';

  /** A connection to a fresh schema (or `schema`), released after the test. */
  async function connect(schema = schemas[0] ?? freshSchema()): Promise<PostgresConnection> {
    url = await cluster().database('migrations');
    if (!schemas.includes(schema)) schemas.push(schema);
    const connection = new PostgresConnection({ url, schema });
    connection.retain();
    connections.push(connection);
    return connection;
  }

  async function query(sql: string, schema = schemas[0] ?? 'public'): Promise<unknown[]> {
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }

  afterEach(async () => {
    for (const connection of connections.splice(0)) await connection.release();
    for (const schema of schemas.splice(0)) await dropSchema(url, schema);
  });

  it('lets one of many openers at once migrate a new schema, and the others find it current', async () => {
    const slow: PostgresSchemaPart = { name: 'notes', migrations: ['SELECT pg_sleep(0.2); CREATE TABLE notes (id INTEGER PRIMARY KEY)'] };
    const openers = await Promise.all(Array.from({ length: 5 }, () => connect()));
    await Promise.all(openers.map((connection) => migratePostgresSchemaPart(connection, slow)));
    expect(await query('SELECT part, version FROM schema_versions')).toEqual([{ part: 'notes', version: 1 }]);
    // And the stores themselves, both parts, opened at once on a schema none has made yet.
    const schema = freshSchema();
    schemas.push(schema);
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore({ url, schema })));
    for (const store of stores) await store.close();
    expect(await query('SELECT part, version FROM schema_versions ORDER BY part', schema)).toEqual([
      { part: 'events', version: 1 },
      { part: 'tasks', version: 1 },
    ]);
  });

  it('names the database, never the password, when it refuses a schema another program made', async () => {
    const foreign = await connect();
    await query(`CREATE SCHEMA ${foreign.schema}; CREATE TABLE ${foreign.schema}.customers (id INTEGER PRIMARY KEY)`, 'public');
    const refusal = openPostgresStore({ url, schema: foreign.schema });
    await expect(refusal).rejects.toThrow(
      new RegExp(`Schema "${foreign.schema}" of database "migrations" on 127\\.0\\.0\\.1:\\d+ \\(postgres://colony:\\*\\*\\*@.*\\) holds tables colony did not create`),
    );
    await expect(refusal).rejects.not.toThrow(cluster().password);
  });

  it('migrates a populated store in place: what it held reads back, and an older colony then refuses it', async () => {
    const connection = await connect();
    const store = await openPostgresStore({ url, schema: connection.schema });
    await store.tasks.createTask(rootTask(), 100);
    await store.tasks.createTask(childTask('worker-1', rootTask().id), 110);
    const event = store.events.append(toolStartedInput({ runId: RUN_ID, agentId: 'a' }, 1));
    await store.close();
    const next = { name: 'tasks', migrations: [...POSTGRES_TASK_TABLE_SCHEMA.migrations, "ALTER TABLE tasks ADD COLUMN note TEXT NOT NULL DEFAULT ''"] };
    await migratePostgresSchemaPart(connection, next);
    expect(await query('SELECT id, note FROM tasks ORDER BY seq')).toEqual([
      { id: rootTask().id, note: '' },
      { id: 'worker-1', note: '' },
    ]);
    expect(await query("SELECT version FROM schema_versions WHERE part = 'tasks'")).toEqual([{ version: 2 }]);
    await expect(openPostgresStore({ url, schema: connection.schema })).rejects.toThrow(/version 2, newer than the version 1/);
    // The part it did not touch still opens, with its events.
    const events = await openPostgresEventStore({ url, schema: connection.schema });
    expect((await events.read()).map(withoutSeq)).toEqual([event]);
    await events.close();
  });
});
