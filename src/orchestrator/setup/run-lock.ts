import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { errorMessage } from '../../errors/error-message.js';

export interface RunLock {
  /** The lock file; a run's state directory's lock is `<state>/run.lock`. */
  readonly path: string;
  /** True until `release`: the holder alone may touch what the lock guards. */
  isHeld(): boolean;
  release(): void;
}

/** Taken, or not: held by another process (`heldElsewhere`), or the lock file could not be used. */
export type LockResult = { readonly ok: true; readonly lock: RunLock } | { readonly ok: false; readonly heldElsewhere: boolean; readonly error: string };

interface Holder {
  readonly pid: number;
  readonly since: string;
}

/**
 * Takes an exclusive lock for one run, named by `path`, or says who holds it.
 *
 * The lock is a write transaction held open on a small SQLite file: the operating system
 * releases it when the process ends however it ends, so there is no stale lock to detect or
 * take over, and two processes (or two runs in one process) can never both hold it. Who holds
 * it is written beside it, for the message only.
 */
export function acquireRunLock(path: string, what: string): LockResult {
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: 0 });
  } catch (error) {
    return { ok: false, heldElsewhere: false, error: `cannot create the lock ${path}: ${errorMessage(error)}` };
  }
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    db.close();
    if (!hasCode(error, 'SQLITE_BUSY')) return { ok: false, heldElsewhere: false, error: `cannot take the lock ${path}: ${errorMessage(error)}` };
    const holder = readHolder(`${path}.json`);
    const who = holder === null ? 'another colony run' : `another colony run (process ${holder.pid}, since ${holder.since})`;
    return { ok: false, heldElsewhere: true, error: `${who} is working on ${what}. Wait for it to finish, or stop it (Ctrl-C in its terminal).` };
  }
  const holderPath = `${path}.json`;
  writeFileSync(holderPath, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }));
  return {
    ok: true,
    lock: {
      path,
      isHeld: () => db.open,
      release() {
        if (!db.open) return;
        rmSync(holderPath, { force: true });
        db.exec('ROLLBACK');
        db.close();
      },
    },
  };
}

/**
 * Whether the holder written beside the lock at `path` is a process alive on this machine, for
 * where the lock itself cannot be tried (a read-only view of a state directory). That file is
 * there from the lock's take to its release, and is left behind by a holder that died.
 */
export function lockHolderIsAlive(path: string): boolean {
  const holder = readHolder(`${path}.json`);
  if (holder === null) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process is there, run by another user.
    return hasCode(error, 'EPERM');
  }
}

function readHolder(path: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, since: String(parsed.since ?? 'an unknown time') } : null;
  } catch {
    return null;
  }
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

