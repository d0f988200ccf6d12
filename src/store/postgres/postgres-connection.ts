import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { ClientBase, ClientConfig, PoolClient } from 'pg';
import { errorMessage } from '../../errors/error-message.js';
import { CommitOutcomeUnknownError, PostgresStoreError, isConnectionFailure, isTransientConflict, redactedError } from './postgres-failures.js';
import { describeTarget, passwordOf, postgresTarget, redactPostgresText } from './postgres-url.js';
import type { PostgresTarget } from './postgres-url.js';

/** How a PostgreSQL store reaches its database. */
export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database`; messages only ever show it as `postgres://user:***@host:port/database`. */
  readonly url: string;
  /** The PostgreSQL schema that holds colony's tables, created when missing (default `public`). */
  readonly schema?: string;
  /** The most connections open at once (default 4). */
  readonly poolSize?: number;
  /**
   * How long an operation keeps trying while the database cannot be reached or its connection
   * broke (default 30 000 ms), waiting longer between tries, before it rejects saying so.
   */
  readonly retryMs?: number;
}

/** What a statement runs on: a pooled client, inside a transaction or not. */
export type Queryable = Pick<ClientBase, 'query'>;

const DEFAULT_SCHEMA = 'public';
const DEFAULT_POOL_SIZE = 4;
export const DEFAULT_RETRY_MS = 30_000;
/** The first wait before trying a failed connection again, doubled each time up to the longest. */
export const FIRST_RETRY_DELAY_MS = 100;
export const LONGEST_RETRY_DELAY_MS = 2_000;
/** A connection attempt that neither succeeds nor fails (a server that drops packets) is given up after this long. */
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_IN_TRANSACTION_MS = 60_000;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** One try of an operation: whether its COMMIT was sent, and whether its client must not go back to the pool. */
interface Attempt {
  committing: boolean;
  broken: boolean;
}

function checkOptions(options: PostgresConnectionOptions): void {
  const { schema, poolSize, retryMs } = options;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new PostgresStoreError(`The PostgreSQL schema must be a lower-case name of letters, digits and underscores, got ${JSON.stringify(schema)}.`);
  }
  if (poolSize !== undefined && !(Number.isSafeInteger(poolSize) && poolSize >= 1)) {
    throw new TypeError(`The PostgreSQL pool size must be a whole number of at least 1, got ${String(poolSize)}.`);
  }
  if (retryMs !== undefined && !(Number.isSafeInteger(retryMs) && retryMs >= 0)) {
    throw new TypeError(`The PostgreSQL retry time must be whole milliseconds, got ${String(retryMs)}.`);
  }
}

/**
 * The pool of connections a PostgreSQL store uses, shared by its parts (the event log, the task
 * table), and how every operation goes through it: a connection refused or lost is tried again
 * with growing waits for `retryMs`, then the operation rejects with a message that names the
 * host and the database but never the password; after that, operations try once each until one
 * gets through (the server counts as gone, not as blinking). A transaction whose connection broke before
 * its COMMIT was sent is tried again whole (the server rolled it back); one that broke while
 * committing is not (see `CommitOutcomeUnknownError`). A transaction the server rolled back to
 * break a deadlock is tried again too (see `isTransientConflict`). Ends its pool when the last part that
 * uses it lets go (`retain`, `release`).
 */
export class PostgresConnection {
  readonly target: PostgresTarget;
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly password: string;
  private readonly retryMs: number;
  private readonly clientConfig: ClientConfig;
  private users = 0;
  /** When the operation began that last waited out the retry time in vain; null once one got through since. */
  private unreachableSince: number | null = null;

  constructor(options: PostgresConnectionOptions) {
    checkOptions(options);
    this.target = postgresTarget(options.url);
    if (/[?&]options=/.test(options.url)) {
      throw new PostgresStoreError(`The URL of ${describeTarget(this.target)} sets options; colony sets them itself (the schema's search_path). Leave them out of the URL.`);
    }
    this.password = passwordOf(options.url);
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    this.retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
    const types = new pg.TypeOverrides();
    // Seqs, times and counts are BIGINT: whole milliseconds and counters stay far below 2^53.
    types.setTypeParser(pg.types.builtins.INT8, (text: string) => Number(text));
    this.clientConfig = {
      connectionString: options.url,
      // A session that sits in a transaction (its client partitioned away) would hold its locks, the
      // log's among them, until TCP gives up on it; the server ends it after a minute instead.
      options: `-c search_path=${this.schema} -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_MS}`,
      types,
      keepAlive: true,
      connectionTimeoutMillis: Math.min(CONNECT_TIMEOUT_MS, Math.max(this.retryMs, 1_000)),
      application_name: 'colony',
    };
    this.pool = new pg.Pool({ ...this.clientConfig, max: options.poolSize ?? DEFAULT_POOL_SIZE });
    // An idle connection the server closed: the pool drops it and the next checkout opens another.
    this.pool.on('error', () => undefined);
  }

  /** `text` without the password, for every message a store writes or throws. */
  readonly redact = (text: string): string => redactPostgresText(text, this.password);

  /** The database as messages name it: host, port, database and the URL without its password. */
  describe(): string {
    return describeTarget(this.target);
  }

  /** A new client outside the pool (for LISTEN), configured as the pooled ones are. */
  newClient(): pg.Client {
    return new pg.Client(this.clientConfig);
  }

  /** Counts one more part using the pool. */
  retain(): void {
    this.users += 1;
  }

  /** Counts one part less; the last one ends the pool. */
  async release(): Promise<void> {
    this.users -= 1;
    if (this.users === 0) await this.pool.end();
  }

  /** A key for PostgreSQL's advisory locks, the same in every process for this schema and `name`. */
  lockKey(name: string): string {
    return createHash('sha256').update(`colony ${this.schema} ${name}`).digest().readBigInt64BE(0).toString();
  }

  /** Runs statements that change nothing, tried again while the connection fails. */
  async read<Result>(work: (client: Queryable) => Promise<Result>): Promise<Result> {
    return this.withRetry((client) => work(client));
  }

  /**
   * Runs `work` in one transaction (READ COMMITTED: each statement sees what committed before it
   * started), committed when it returns and rolled back when it throws.
   */
  async transaction<Result>(work: (client: Queryable) => Promise<Result>): Promise<Result> {
    return this.withRetry(async (client, attempt) => {
      await client.query('BEGIN');
      let result: Result;
      try {
        result = await work(client);
      } catch (error) {
        if (!isConnectionFailure(error)) {
          // A client left inside a transaction would hand the next user its locks.
          await client.query('ROLLBACK').catch(() => {
            attempt.broken = true;
          });
        }
        throw error;
      }
      attempt.committing = true;
      await client.query('COMMIT');
      return result;
    });
  }

  private async withRetry<Result>(work: (client: PoolClient, attempt: Attempt) => Promise<Result>): Promise<Result> {
    const started = Date.now();
    let delay = FIRST_RETRY_DELAY_MS;
    for (;;) {
      const attempt: Attempt = { committing: false, broken: false };
      try {
        const result = await this.onClient(attempt, work);
        this.unreachableSince = null;
        return result;
      } catch (error) {
        const conflict = isTransientConflict(error);
        if (!isConnectionFailure(error) && !conflict) throw redactedError(error, this.redact);
        if (attempt.committing && !conflict) {
          throw new CommitOutcomeUnknownError(
            `The connection to ${this.describe()} broke while a transaction was committing (${this.redact(errorMessage(error))}), ` +
              'so whether its change was made is not known. Read the state again before making the change again.',
            redactedError(error, this.redact),
          );
        }
        if (conflict && Date.now() - started + delay > this.retryMs) throw redactedError(error, this.redact);
        if (!conflict && (this.unreachableSince !== null || Date.now() - started + delay > this.retryMs)) {
          // Once one operation has waited out the retry time, the server counts as gone: the
          // next ones try once each until one gets through, so a run winding down with its store
          // gone does not wait the whole retry time again at every step.
          this.unreachableSince ??= started;
          throw this.unreachable(error, Date.now() - this.unreachableSince);
        }
        await sleep(delay);
        delay = Math.min(delay * 2, LONGEST_RETRY_DELAY_MS);
      }
    }
  }

  private async onClient<Result>(attempt: Attempt, work: (client: PoolClient, attempt: Attempt) => Promise<Result>): Promise<Result> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      if (isConnectionFailure(error)) throw error;
      // The server answered and refused (a wrong password, a missing database, no permission).
      redactedError(error, this.redact);
      throw new PostgresStoreError(`Could not open a connection to ${this.describe()}: ${this.redact(errorMessage(error))}.`, { cause: error });
    }
    try {
      return await work(client, attempt);
    } catch (error) {
      attempt.broken ||= isConnectionFailure(error);
      throw error;
    } finally {
      client.release(attempt.broken);
    }
  }

  private unreachable(error: unknown, waitedMs: number): Error {
    return new PostgresStoreError(
      `Could not reach PostgreSQL: ${this.describe()} did not answer or dropped the connection ` +
        `(${this.redact(errorMessage(error))}), and trying again for ${Math.round(waitedMs / 1_000)} s did not help. ` +
        'Check that the server is running and that this machine can reach it.',
      { cause: redactedError(error, this.redact) },
    );
  }
}
