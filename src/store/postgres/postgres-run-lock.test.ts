import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPostgres, freshSchema, usePostgresCluster } from '../testing/postgres-store-under-test.js';
import { PostgresConnection } from './postgres-connection.js';
import { probePostgresStore } from './postgres-probe.js';
import { tryPostgresRunLock } from './postgres-run-lock.js';

describeWithPostgres('a PostgreSQL store, before and around a run', () => {
  const cluster = usePostgresCluster();

  it('has a run lock held by one session at a time, per schema, and free again once released', async () => {
    const url = await cluster().database('run_lock');
    const schema = freshSchema();
    const first = await tryPostgresRunLock({ url, schema });
    if (!first.ok) throw new Error(first.error);
    expect(first.lock.isHeld()).toBe(true);
    const second = await tryPostgresRunLock({ url, schema });
    expect(second).toMatchObject({ ok: false, heldElsewhere: true });
    // Another schema is another store, with a lock of its own.
    const elsewhere = await tryPostgresRunLock({ url, schema: freshSchema() });
    expect(elsewhere.ok).toBe(true);
    if (elsewhere.ok) await elsewhere.lock.release();
    await first.lock.release();
    expect(first.lock.isHeld()).toBe(false);
    const third = await tryPostgresRunLock({ url, schema });
    expect(third.ok).toBe(true);
    if (third.ok) await third.lock.release();
  });

  /** Ends, as the server does when a machine goes away, every session but the caller's that holds an advisory lock. */
  async function cutOffHolders(url: string): Promise<void> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()");
    } finally {
      await admin.end();
    }
  }

  /** The backends that hold an advisory lock now. */
  async function advisoryHolders(url: string): Promise<number[]> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted");
      return rows.map((row) => row.pid);
    } finally {
      await admin.end();
    }
  }

  /** Whether a session comes to wait for an advisory lock, within a few seconds. */
  async function waitUntilWaiting(url: string): Promise<boolean> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (let tries = 0; tries < 200; tries += 1) {
        const { rows } = await admin.query<{ waiting: string }>("SELECT COUNT(*) AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
        if (Number(rows[0]?.waiting) > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    } finally {
      await admin.end();
    }
  }

  async function waitFor(condition: () => boolean): Promise<boolean> {
    for (let tries = 0; tries < 200 && !condition(); tries += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    return condition();
  }

  it('has a run lock its holder takes back when its connection breaks and nobody took it meanwhile', async () => {
    const url = await cluster().database('run_lock');
    const schema = freshSchema();
    const held = await tryPostgresRunLock({ url, schema });
    if (!held.ok) throw new Error(held.error);
    const before = await advisoryHolders(url);
    expect(before).toHaveLength(1);
    await cutOffHolders(url);
    // Held again, on a session of its own: a new backend, not the one the server ended.
    let after: number[] = [];
    for (let tries = 0; tries < 200 && (after.length !== 1 || after[0] === before[0]); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await advisoryHolders(url);
    }
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
    expect(held.lock.isHeld()).toBe(true);
    expect(await tryPostgresRunLock({ url, schema })).toMatchObject({ ok: false, heldElsewhere: true });
    expect(held.lock.lost.aborted).toBe(false);
    await held.lock.release();
  });

  it('has a run lock that goes with its session: another process waiting for it takes it, and the holder learns it lost it and why', async () => {
    const url = await cluster().database('run_lock');
    const schema = freshSchema();
    const held = await tryPostgresRunLock({ url, schema });
    if (!held.ok) throw new Error(held.error);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const key = new PostgresConnection({ url, schema }).lockKey('run lock');
      // Waits in the server's queue for the lock, and has it the moment the holder's session ends.
      const waiting = other.query('SELECT pg_advisory_lock($1)', [key]);
      expect(await waitUntilWaiting(url)).toBe(true);
      await cutOffHolders(url);
      await waiting;
      expect(await waitFor(() => held.lock.lost.aborted)).toBe(true);
      expect(String(held.lock.lost.reason)).toMatch(/the run lock of database "run_lock" on .* was lost: another process took it while this one was cut off from the server/);
      expect(held.lock.isHeld()).toBe(false);
    } finally {
      await other.end();
      await held.lock.release();
    }
  });

  it('says, without the password, why it could not ask for the run lock', async () => {
    const url = (await cluster().database('run_lock')).replace(`:${cluster().password}@`, ':wrong-password-1234@');
    const result = await tryPostgresRunLock({ url });
    expect(result).toMatchObject({ ok: false, heldElsewhere: false });
    if (result.ok) return;
    expect(result.error).toMatch(/cannot reach database "run_lock" on 127\.0\.0\.1:\d+ .* to take its run lock: password authentication failed/);
    expect(result.error).not.toContain('wrong-password-1234');
  });

  it("is probed for colony doctor: the server's version and connections, and whether the schema is there and may be made, changing nothing", async () => {
    const url = await cluster().database('probed');
    const schema = freshSchema();
    const probed = await probePostgresStore({ url, schema });
    if (!probed.ok) throw new Error(probed.error);
    expect(probed.probe).toMatchObject({ schema, schemaExists: false, mayCreate: true });
    expect(probed.probe.serverVersion).toMatch(/^\d+\.\d+/);
    expect(probed.probe.maxConnections).toBeGreaterThan(0);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      expect(rows).toEqual([]);
      // A user who may not make tables in the schema is told so.
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.query("CREATE ROLE reader LOGIN PASSWORD 'reader-password-99'");
      await admin.query('GRANT USAGE ON SCHEMA ' + schema + ' TO reader');
    } finally {
      await admin.end();
    }
    const asReader = await probePostgresStore({ url: url.replace(`colony:${cluster().password}@`, 'reader:reader-password-99@'), schema });
    expect(asReader).toMatchObject({ ok: true, probe: { schemaExists: true, mayCreate: false } });
  });

  it('says why a probe could not connect, without the password', async () => {
    const url = (await cluster().database('probed')).replace(`:${cluster().password}@`, ':wrong-password-5678@');
    const probed = await probePostgresStore({ url, retryMs: 200 });
    expect(probed.ok).toBe(false);
    if (probed.ok) return;
    expect(probed.error).toContain('password authentication failed');
    expect(probed.error).not.toContain('wrong-password-5678');
  });
});
