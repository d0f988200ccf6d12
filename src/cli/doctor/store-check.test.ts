import { describe, expect, it } from 'vitest';
import type { PostgresProbe } from '../../store/postgres/postgres-probe.js';
import { checkStore, FEW_CONNECTIONS } from './store-check.js';

const URL = 'postgres://colony:s3cret-pass@db.internal:5433/colony?schema=runs';
const FINE: PostgresProbe = { serverVersion: '15.19', schema: 'runs', schemaExists: true, mayCreate: true, maxConnections: 100 };

describe("colony doctor's store line", () => {
  it('passes a store colony may make its tables in, naming it without the password', async () => {
    const check = await checkStore(URL, async () => ({ ok: true, probe: FINE }));
    expect(check).toMatchObject({ name: 'store', status: 'pass' });
    expect(check.detail).toBe('database "colony" on db.internal:5433 (postgres://colony:***@db.internal:5433/colony?schema=runs): PostgreSQL 15.19, schema runs, 100 connections at most');
  });

  it('fails a store that does not answer, or where colony may not make its tables, with the fix', async () => {
    const said = 'Could not reach PostgreSQL: database "colony" on db.internal:5433 (postgres://colony:***@db.internal:5433/colony?schema=runs) did not answer';
    const unreachable = await checkStore(URL, async () => ({ ok: false, error: said }));
    expect(unreachable).toMatchObject({ status: 'fail', detail: said, fix: expect.stringContaining('PGPASSWORD') });
    const noRights = await checkStore(URL, async () => ({ ok: true, probe: { ...FINE, mayCreate: false } }));
    expect(noRights).toMatchObject({ status: 'fail', fix: expect.stringContaining('GRANT CREATE ON SCHEMA runs') });
    const noSchema = await checkStore(URL, async () => ({ ok: true, probe: { ...FINE, schemaExists: false, mayCreate: false } }));
    expect(noSchema).toMatchObject({ status: 'fail', fix: expect.stringContaining('GRANT CREATE ON DATABASE') });
    expect(noSchema.detail).toContain('schema runs (made on the first run)');
  });

  it('warns of a server with few connections for several machines', async () => {
    const check = await checkStore(URL, async () => ({ ok: true, probe: { ...FINE, maxConnections: FEW_CONNECTIONS - 1 } }));
    expect(check).toMatchObject({ status: 'warn', fix: expect.stringContaining('max_connections') });
  });
});
