import type { PostgresConnection, Queryable } from './postgres-connection.js';
import { PostgresStoreError } from './postgres-failures.js';

/**
 * The schema of one part of a colony store in PostgreSQL (the event log, the task table and
 * inboxes), as the ordered list of SQL scripts that build it: script N moves the part from
 * version N to N + 1; a released script is never edited, only followed by a new one. The same
 * shape as the SQLite store's parts, with scripts of their own.
 */
export interface PostgresSchemaPart {
  readonly name: string;
  readonly migrations: readonly string[];
}

const VERSIONS_TABLE = 'schema_versions';

async function tableExists(client: Queryable, schema: string, name: string): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [schema, name]);
  return rows.length > 0;
}

async function storedVersion(client: Queryable, schema: string, part: string): Promise<number | undefined> {
  if (!(await tableExists(client, schema, VERSIONS_TABLE))) return undefined;
  const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${VERSIONS_TABLE} WHERE part = $1`, [part]);
  return rows[0]?.version ?? 0;
}

/**
 * Brings `part` up to its latest version in the connection's schema, in one transaction: every
 * script it has not seen, then its new version in `schema_versions` (one row per part, so the
 * parts migrate apart, as in SQLite). A transaction-scoped advisory lock makes openers in other
 * processes wait rather than migrate the same schema twice; they then find it current.
 *
 * Throws when the schema holds tables colony did not make (tables but no `schema_versions`) or
 * a version newer than this colony knows, because writing into either would damage it.
 */
export async function migratePostgresSchemaPart(connection: PostgresConnection, part: PostgresSchemaPart): Promise<void> {
  const { schema } = connection;
  const latest = part.migrations.length;
  // Most opens find the schema current: check before taking the lock.
  if ((await connection.read((client) => storedVersion(client, schema, part.name))) === latest) return;
  await connection.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [connection.lockKey('migrations')]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    // The connection's search_path names the schema, but one made just now is only searched once set again.
    await client.query(`SET LOCAL search_path TO ${schema}`);
    let current = await storedVersion(client, schema, part.name);
    if (current === undefined) {
      const { rows } = await client.query<{ name: string }>(
        'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name LIMIT 1',
        [schema],
      );
      const other = rows[0];
      if (other !== undefined) {
        throw new PostgresStoreError(
          `Schema "${schema}" of ${connection.describe()} holds tables colony did not create (it has a table "${other.name}" ` +
            `and no ${VERSIONS_TABLE} table). Point colony at another database or schema, or at one it created.`,
        );
      }
      await client.query(`CREATE TABLE ${VERSIONS_TABLE} (part TEXT PRIMARY KEY, version INTEGER NOT NULL)`);
      current = 0;
    }
    if (current > latest) {
      throw new PostgresStoreError(
        `Schema "${schema}" of ${connection.describe()} holds the ${part.name} schema at version ${current}, newer than the ` +
          `version ${latest} this colony knows. Upgrade colony to open it.`,
      );
    }
    for (const script of part.migrations.slice(current)) await client.query(script);
    await client.query(
      `INSERT INTO ${VERSIONS_TABLE} (part, version) VALUES ($1, $2) ON CONFLICT (part) DO UPDATE SET version = excluded.version`,
      [part.name, latest],
    );
  });
}
