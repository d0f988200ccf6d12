import { errorMessage } from '../../errors/error-message.js';
import { PostgresConnection } from './postgres-connection.js';
import type { PostgresConnectionOptions } from './postgres-connection.js';
import { redactedError } from './postgres-failures.js';

/** What a store's server says about itself, for `colony doctor`. */
export interface PostgresProbe {
  /** The server's version, such as `15.19`. */
  readonly serverVersion: string;
  readonly schema: string;
  /** Whether colony's schema is there already (it is made on first use when the user may). */
  readonly schemaExists: boolean;
  /** Whether the user may make the schema, or tables in it: what colony's first run needs. */
  readonly mayCreate: boolean;
  /** The server's `max_connections`: every process of a run holds a pool of its own. */
  readonly maxConnections: number;
}

/**
 * Connects to the store once, changing nothing, and reads what a run needs of it; or says what
 * kept it from connecting, within `retryMs`. No message holds the password.
 */
export async function probePostgresStore(options: PostgresConnectionOptions): Promise<{ readonly ok: true; readonly probe: PostgresProbe } | { readonly ok: false; readonly error: string }> {
  const connection = new PostgresConnection({ ...options, poolSize: 1 });
  connection.retain();
  try {
    const probe = await connection.read(async (client) => {
      const result = await client.query<{ version: string; schema_exists: boolean; may_create: boolean; max_connections: string }>(
        `SELECT current_setting('server_version') AS version,
                EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema_exists,
                CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)
                     THEN has_schema_privilege($1, 'CREATE')
                     ELSE has_database_privilege(current_database(), 'CREATE') END AS may_create,
                current_setting('max_connections') AS max_connections`,
        [connection.schema],
      );
      const row = result.rows[0];
      if (row === undefined) throw new Error('the server returned no row');
      return { serverVersion: row.version, schema: connection.schema, schemaExists: row.schema_exists, mayCreate: row.may_create, maxConnections: Number(row.max_connections) };
    });
    return { ok: true, probe };
  } catch (error) {
    redactedError(error, connection.redact);
    return { ok: false, error: connection.redact(errorMessage(error)) };
  } finally {
    await connection.release();
  }
}
