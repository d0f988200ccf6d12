import type pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../../errors/error-message.js';
import { DEFAULT_RETRY_MS, FIRST_RETRY_DELAY_MS, LONGEST_RETRY_DELAY_MS, PostgresConnection } from './postgres-connection.js';
import type { PostgresConnectionOptions } from './postgres-connection.js';
import { redactedError } from './postgres-failures.js';

/** A lock on one schema of a PostgreSQL store, held by this process until `release` or its end. */
export interface PostgresRunLock {
  /** False once released, and while its connection is broken (the server let the lock go with it). */
  isHeld(): boolean;
  /**
   * Aborts, its reason an Error saying why, once the lock is lost for good: its connection
   * broke and it could not be taken again within `retryMs`, because another process took it
   * meanwhile or the server stayed out of reach.
   */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export type PostgresRunLockResult = { readonly ok: true; readonly lock: PostgresRunLock } | { readonly ok: false; readonly heldElsewhere: boolean; readonly error: string };

type Attempt = { readonly ok: true; readonly client: pg.Client } | { readonly ok: false; readonly heldElsewhere: boolean; readonly error: string };

/** One try at the lock on a new connection of its own; the connection is ended unless the lock was taken. */
async function attempt(connection: PostgresConnection, key: string): Promise<Attempt> {
  const client = connection.newClient();
  // A broken connection takes the lock with it: the 'end' that follows says so.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [key]);
    if (result.rows[0]?.taken === true) return { ok: true, client };
    await client.end().catch(() => undefined);
    return { ok: false, heldElsewhere: true, error: `another process holds the run lock of ${connection.describe()}` };
  } catch (error) {
    await client.end().catch(() => undefined);
    redactedError(error, connection.redact);
    return { ok: false, heldElsewhere: false, error: `cannot reach ${connection.describe()} to take its run lock: ${connection.redact(errorMessage(error))}` };
  }
}

/**
 * Takes the store's run lock without waiting: a session-level advisory lock on a connection of
 * its own, keyed by the schema. PostgreSQL lets it go when that connection ends however it
 * ends (the process killed, its machine gone), so a run's process holds it for its life and
 * another machine can take it, and the run, once that process is gone. When the connection
 * breaks under a holder that goes on, the lock is taken again on a new one, tried with backoff
 * for `retryMs`; `lost` aborts if that fails. Says when another session holds it, or what kept
 * it from asking; no message holds the password.
 */
export async function tryPostgresRunLock(options: PostgresConnectionOptions): Promise<PostgresRunLockResult> {
  const connection = new PostgresConnection(options);
  connection.retain();
  const key = connection.lockKey('run lock');
  const first = await attempt(connection, key);
  if (!first.ok) {
    await connection.release();
    return first;
  }
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const lost = new AbortController();
  let client = first.client;
  let held = true;
  let released = false;

  const retake = async (): Promise<void> => {
    const started = Date.now();
    let delay = FIRST_RETRY_DELAY_MS;
    while (!released) {
      const again = await attempt(connection, key);
      if (again.ok) {
        if (released) {
          await again.client.end().catch(() => undefined);
          return;
        }
        client = again.client;
        watch(client);
        held = true;
        return;
      }
      if (again.heldElsewhere || Date.now() - started + delay > retryMs) {
        const why = again.heldElsewhere ? 'another process took it while this one was cut off from the server' : again.error;
        lost.abort(new Error(`the run lock of ${connection.describe()} was lost: ${why}`));
        return;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, LONGEST_RETRY_DELAY_MS);
    }
  };
  const watch = (current: pg.Client): void => {
    current.on('end', () => {
      if (released || current !== client) return;
      held = false;
      void retake();
    });
  };
  watch(client);

  return {
    ok: true,
    lock: {
      isHeld: () => held,
      lost: lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        held = false;
        // Ending the session lets its advisory locks go.
        await client.end().catch(() => undefined);
        await connection.release();
      },
    },
  };
}
