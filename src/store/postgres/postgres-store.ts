import type { EventStore } from '../events/event-store.js';
import { PostgresConnection } from './postgres-connection.js';
import type { PostgresConnectionOptions } from './postgres-connection.js';
import { openPostgresEventLog } from './postgres-event-store.js';
import type { PostgresEventLogOptions } from './postgres-event-store.js';
import { migratePostgresSchemaPart } from './postgres-migrations.js';
import type { PostgresSchemaPart } from './postgres-migrations.js';
import { POSTGRES_EVENT_LOG_SCHEMA, POSTGRES_TASK_TABLE_SCHEMA } from './postgres-schema.js';
import { openPostgresTaskTable } from './postgres-task-store.js';
import type { PostgresTaskStore } from './postgres-task-store.js';

/** How to reach the database, and how the event log writes (see each). */
export type PostgresStoreOptions = PostgresConnectionOptions & PostgresEventLogOptions;

/** Both parts of a PostgreSQL store, sharing one pool of connections. */
export interface PostgresStore {
  readonly events: EventStore;
  readonly tasks: PostgresTaskStore;
  /** Closes both parts, the log's buffered events written first; the pool ends with the last. */
  close(): Promise<void>;
}

/**
 * Makes a connection, migrates `parts` and hands it to `open`; the connection ends when every
 * part it opened is closed, or at once when opening fails.
 */
async function withConnection<Opened>(options: PostgresConnectionOptions, parts: readonly PostgresSchemaPart[], open: (connection: PostgresConnection) => Promise<Opened>): Promise<Opened> {
  const connection = new PostgresConnection(options);
  // Held while opening, so a part that fails to open ends the pool rather than leaving it behind.
  connection.retain();
  try {
    for (const part of parts) await migratePostgresSchemaPart(connection, part);
    return await open(connection);
  } finally {
    await connection.release();
  }
}

/**
 * Opens the event log and the task table in the PostgreSQL database at `options.url` (in
 * `options.schema`, default `public`, created when missing), migrating both, through one pool.
 * Rejects with what to do when the schema holds tables colony did not make or a newer colony's
 * schema, or when the database cannot be reached within `retryMs`; no message holds the password.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  return withConnection(options, [POSTGRES_EVENT_LOG_SCHEMA, POSTGRES_TASK_TABLE_SCHEMA], async (connection) => {
    const events = await openPostgresEventLog(connection, options);
    const tasks = openPostgresTaskTable(connection);
    return {
      events,
      tasks,
      close: async () => {
        await events.close();
        await tasks.close();
      },
    };
  });
}

/** Opens only the event log, with a pool of its own (see `openPostgresStore`). */
export async function openPostgresEventStore(options: PostgresStoreOptions): Promise<EventStore> {
  return withConnection(options, [POSTGRES_EVENT_LOG_SCHEMA], (connection) => openPostgresEventLog(connection, options));
}

/** Opens only the task table, inboxes and run steering, with a pool of its own (see `openPostgresStore`). */
export async function openPostgresTaskStore(options: PostgresConnectionOptions): Promise<PostgresTaskStore> {
  return withConnection(options, [POSTGRES_TASK_TABLE_SCHEMA], async (connection) => openPostgresTaskTable(connection));
}
