import { existsSync } from 'node:fs';
import type { EventStore } from '../../store/events/event-store.js';
import { openPostgresEventStore, openPostgresTaskStore } from '../../store/postgres/postgres-store.js';
import type { PostgresConnectionOptions } from '../../store/postgres/postgres-connection.js';
import { tryPostgresRunLock } from '../../store/postgres/postgres-run-lock.js';
import { passwordOf, postgresTarget, describeTarget } from '../../store/postgres/postgres-url.js';
import { folderIsWritable } from '../../store/sqlite/sqlite-connection.js';
import { openSqliteEventLogToRead } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { acquireRunLock, lockHolderIsAlive } from './run-lock.js';
import { eventsDatabasePath, stateLockPath } from './state-directory.js';

/**
 * Where a run keeps its state. Always a state directory on this machine (its workspaces, views
 * and locks); the run's event log and task table are that directory's SQLite file, or, with
 * `storeUrl`, a PostgreSQL database that every machine of the run reaches.
 */
export interface RunState {
  readonly stateDir: string;
  /** `postgres://user[:password]@host[:port]/database[?schema=name]`. */
  readonly storeUrl?: string;
}

/** The run state of `stateDir`, with the store at `storeUrl` when one is given. */
export function runStateAt(stateDir: string, storeUrl: string | undefined): RunState {
  return storeUrl === undefined ? { stateDir } : { stateDir, storeUrl };
}

/**
 * How long a command that reads or steers a run waits for a store that does not answer, before
 * it says so: a run waits out a server's restart (the store's own 30 s); a person asking for a
 * status is told within seconds that the address is wrong or the server is down.
 */
export const COMMAND_STORE_PATIENCE_MS = 5_000;

/** The connection options a store URL stands for: `?schema=` picks the schema (default `public`). */
export function postgresOptionsOf(storeUrl: string, retryMs?: number): PostgresConnectionOptions {
  const schema = schemaOf(storeUrl);
  return { url: storeUrl, ...(schema === null ? {} : { schema }), ...(retryMs === undefined ? {} : { retryMs }) };
}

function schemaOf(storeUrl: string): string | null {
  const query = storeUrl.indexOf('?');
  if (query === -1) return null;
  return new URLSearchParams(storeUrl.slice(query + 1)).get('schema');
}

/** How messages name where a run's log is: the state directory, or the store without its password. */
export function describeRunState(state: RunState): string {
  return state.storeUrl === undefined ? state.stateDir : `the store ${describeTarget(postgresTarget(state.storeUrl))}`;
}

/** The secrets a run state's address carries (a store URL's password), to keep out of what is recorded and printed. */
export function runStateSecrets(state: Pick<RunState, 'storeUrl'>): string[] {
  const password = state.storeUrl === undefined ? '' : passwordOf(state.storeUrl);
  return password === '' ? [] : [password];
}

/**
 * Whether there may be runs to read: a state directory's log exists; a store is asked (an empty
 * one has no runs, which the caller finds by reading it).
 */
export function mayHoldRuns(state: RunState): boolean {
  return state.storeUrl !== undefined || existsSync(eventsDatabasePath(state.stateDir));
}

/** The run state's event log, opened for a command that only reads it (see `openSqliteEventLogToRead`). */
export async function openRunLogToRead(state: RunState): Promise<EventStore> {
  if (state.storeUrl !== undefined) return openPostgresEventStore(postgresOptionsOf(state.storeUrl, COMMAND_STORE_PATIENCE_MS));
  return openSqliteEventLogToRead(eventsDatabasePath(state.stateDir));
}

/**
 * The run state's task table, opened for reading, or null where there is none yet (a state
 * directory only `colony work` used, or one from before task tables).
 */
export async function openTaskTableToRead(state: RunState): Promise<TaskStore | null> {
  if (state.storeUrl !== undefined) return openPostgresTaskStore(postgresOptionsOf(state.storeUrl, COMMAND_STORE_PATIENCE_MS));
  try {
    // Read-only: reading never creates or migrates the task table under a run.
    return openSqliteTaskStore(eventsDatabasePath(state.stateDir), { readOnly: true });
  } catch {
    return null;
  }
}

/** The lock a run's process holds on where its log is while it runs; `release` lets it go. */
export interface StoreLock {
  isHeld(): boolean;
  /** Aborts, its reason an Error, when the lock is lost while held (a store's, whose connection broke and could not take it back). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export type StoreLockResult = { readonly ok: true; readonly lock: StoreLock } | { readonly ok: false; readonly heldElsewhere: boolean; readonly error: string };

/**
 * Takes the lock of where a run's log is, without waiting: the state directory's run lock, or a
 * store's (an advisory lock PostgreSQL lets go when the holding process's connection ends, on
 * whichever machine). One run's process at a time works on a log.
 */
export async function acquireStoreLock(state: RunState, retryMs?: number): Promise<StoreLockResult> {
  if (state.storeUrl === undefined) {
    const taken = acquireRunLock(stateLockPath(state.stateDir), `the state directory ${state.stateDir}`);
    if (!taken.ok) return taken;
    const { lock } = taken;
    // The operating system holds a file's lock for as long as the process lives.
    return { ok: true, lock: { isHeld: () => lock.isHeld(), lost: new AbortController().signal, release: async () => lock.release() } };
  }
  const taken = await tryPostgresRunLock(postgresOptionsOf(state.storeUrl, retryMs));
  if (taken.ok) return taken;
  if (!taken.heldElsewhere) return { ok: false, heldElsewhere: false, error: taken.error };
  return {
    ok: false,
    heldElsewhere: true,
    error: `another colony run is working on ${describeRunState(state)}, from this machine or another. Wait for it to finish, or stop it (Ctrl-C in its terminal).`,
  };
}

/**
 * Whether no run's process holds the lock of where the log is, so a run recorded as going was
 * interrupted. A state directory that cannot be written (a read-only mount, a copy kept for the
 * record) cannot have its lock tried: the holder it names is alive or not.
 */
export async function storeLockIsFree(state: RunState): Promise<boolean> {
  if (state.storeUrl === undefined && !folderIsWritable(state.stateDir)) return !lockHolderIsAlive(stateLockPath(state.stateDir));
  const taken = await acquireStoreLock(state, COMMAND_STORE_PATIENCE_MS);
  if (!taken.ok) return false;
  await taken.lock.release();
  return true;
}
