import type { PostgresProbe } from '../../store/postgres/postgres-probe.js';
import { describeTarget, postgresTarget } from '../../store/postgres/postgres-url.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

/** What reading a store's server gave: its figures, or why it could not be reached. */
export type StoreProbeResult = { readonly ok: true; readonly probe: PostgresProbe } | { readonly ok: false; readonly error: string };

/**
 * Connections a run's processes may hold together below which the line warns: a pool of 4 for
 * the run's process and each `colony worker`, and the commands that read or steer the run.
 */
export const FEW_CONNECTIONS = 20;

/** Whether the PostgreSQL store `--store` names can hold a run: reachable, and colony may make its tables there. */
export async function checkStore(storeUrl: string, probe: (url: string) => Promise<StoreProbeResult>): Promise<DoctorCheck> {
  const where = describeTarget(postgresTarget(storeUrl));
  const name = 'store';
  const found = await probe(storeUrl);
  if (!found.ok) {
    return fail(name, found.error, 'check that the server runs and this machine reaches it (pg_hba.conf), the URL, and the password in PGPASSWORD or ~/.pgpass');
  }
  const { serverVersion, schema, schemaExists, mayCreate, maxConnections } = found.probe;
  const what = `${where}: PostgreSQL ${serverVersion}, schema ${schema}${schemaExists ? '' : ' (made on the first run)'}, ${maxConnections} connections at most`;
  if (!mayCreate) {
    const grant = schemaExists ? `GRANT CREATE ON SCHEMA ${schema} TO <user>` : 'GRANT CREATE ON DATABASE <database> TO <user>';
    return fail(name, `${what}; its user may not make colony's tables there`, `as the database's owner: ${grant}, or name another schema with ?schema=NAME`);
  }
  if (maxConnections < FEW_CONNECTIONS) {
    return warn(name, `${what}: few for a run on several machines (each process holds up to 4)`, 'raise max_connections in postgresql.conf and restart the server');
  }
  return pass(name, what);
}
