import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { startPostgresCluster } from './postgres-cluster.js';
import type { PostgresCluster } from './postgres-cluster.js';

/** Where PostgreSQL cannot be installed, `COLONY_SKIP_POSTGRES_TESTS=1` skips its tests; CI never sets it. */
export const describeWithPostgres = process.env['COLONY_SKIP_POSTGRES_TESTS'] === '1' ? describe.skip : describe;

/**
 * Starts a cluster of this test file's own before its tests and removes it after them, also
 * when they fail. Each file has its own (vitest runs files side by side); suites take a
 * database each. The returned function gives the running cluster.
 */
export function usePostgresCluster(): () => PostgresCluster {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });
  return () => {
    if (cluster === undefined) throw new Error('The test PostgreSQL cluster did not start; see the failure of the hook before this test.');
    return cluster;
  };
}

let schemas = 0;

/** A schema name not used before in this process. */
export function freshSchema(): string {
  schemas += 1;
  return `test_${schemas}`;
}

/**
 * A store in a fresh schema of the database at `url`, for a conformance suite: `reopen` opens
 * another store on the same schema (another pool, as another process would), and `cleanup`
 * closes every store it opened and drops the schema.
 */
export async function postgresStoreUnderTest<Store extends { close(): Promise<void> }>(
  url: string,
  open: (url: string, schema: string) => Promise<Store>,
): Promise<{ store: Store; reopen: () => Promise<Store>; cleanup: () => Promise<void> }> {
  const schema = freshSchema();
  const opened: Store[] = [];
  const openOne = async (): Promise<Store> => {
    const store = await open(url, schema);
    opened.push(store);
    return store;
  };
  return {
    store: await openOne(),
    reopen: openOne,
    cleanup: async () => {
      try {
        for (const store of opened) await store.close();
      } finally {
        await dropSchema(url, schema);
      }
    },
  };
}

/** Removes `schema` and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
