import { accessSync, constants, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { checkSchemaPart, migrateSchemaPart } from './sqlite-migrations.js';
import type { SchemaPart } from './sqlite-migrations.js';
import { errorMessage } from '../../errors/error-message.js';
import { shellWord } from '../../errors/shell-word.js';
import { DAMAGED_FOLDER_SUFFIX, DamagedStoreError } from './damaged-store-error.js';

/** The SQLite result code better-sqlite3 puts on its errors (`SQLITE_BUSY`, ...), or ''. */
export function sqliteCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return '';
}

function notADatabase(path: string, contents: string, error: unknown): DamagedStoreError {
  return new DamagedStoreError(
    path,
    `${path} is not a SQLite database, so it cannot hold colony's ${contents}. ` +
      'Pass the path of a store colony created, or a path where no file exists yet ' +
      'so a new one is made there; move the file away if it is in the way.',
    error,
  );
}

function damaged(path: string, contents: string, error: unknown): DamagedStoreError {
  const folder = dirname(path);
  return new DamagedStoreError(
    path,
    `${path} is damaged (SQLite reads: ${errorMessage(error)}), so colony cannot read the ${contents} kept in it. ` +
      `To start again and keep what is there, run: colony clean --damaged --state ${shellWord(folder)} (with the --repo you ran colony with). ` +
      `It takes down the overlay mounts and git's worktree records that point into the folder and moves it aside to ${shellWord(`${folder}${DAMAGED_FOLDER_SUFFIX}`)}, ` +
      'kept, never deleted, and out of git status; the next colony run then starts a new run.',
    error,
  );
}

/** The error to throw for what opening a store's file raised: one that says which file is damaged, or the error itself. */
function openFailure(path: string, contents: string, error: unknown): unknown {
  const code = sqliteCode(error);
  if (code === 'SQLITE_NOTADB') return notADatabase(path, contents, error);
  if (code === 'SQLITE_CORRUPT') return damaged(path, contents, error);
  return error;
}

/**
 * Opens a connection a colony store is written through, creating the file and its folder when
 * missing: WAL mode, so readers never block the writer; `synchronous = FULL`, so a committed
 * transaction is on disk when the commit returns (with NORMAL, WAL commits are only synced at
 * checkpoints and the last ones can roll back on a power loss); the given busy timeout, so a
 * writer waits for another connection's lock instead of failing; `part` migrated to this
 * version. Several parts may share one file, each through its own connection. Throws with
 * what to do when the file cannot hold the part; `contents` names the part in that message
 * ("event log", "task table").
 *
 * `durable: false` sets `synchronous = OFF` instead: nothing is synced, so a crash of the
 * machine can lose or damage recent commits. It exists only so a benchmark can measure what
 * durability costs; colony itself never turns it off.
 */
export function openSqliteStoreConnection(
  path: string,
  busyTimeoutMs: number,
  part: SchemaPart,
  contents: string,
  durable = true,
): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // The first statement reads the file header: this is where a file that is not SQLite shows.
    db.pragma('journal_mode = WAL');
    // Per connection, and better-sqlite3 defaults to NORMAL in WAL mode, so it is set every time.
    db.pragma(durable ? 'synchronous = FULL' : 'synchronous = OFF');
    migrateSchemaPart(db, path, part);
    return db;
  } catch (error) {
    db.close();
    throw openFailure(path, contents, error);
  }
}

/**
 * Opens a connection that only reads an existing store: it creates nothing and migrates
 * nothing, so it throws, saying what to do, when the file is missing or does not hold `part`
 * at this colony's version. In a folder that cannot be written it reads the file as it was
 * last checkpointed (see `openInReadOnlyFolder`).
 */
export function openReadOnlyStoreConnection(
  path: string,
  busyTimeoutMs: number,
  part: SchemaPart,
  contents: string,
): Database.Database {
  if (!existsSync(path)) throw new Error(`${path} does not exist, so there is no ${contents} to read. Check the path.`);
  let db: Database.Database;
  try {
    db = folderIsWritable(dirname(path)) ? new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs }) : openInReadOnlyFolder(path, contents);
  } catch (error) {
    throw openFailure(path, contents, error);
  }
  try {
    checkSchemaPart(db, path, part, contents);
    return db;
  } catch (error) {
    db.close();
    throw openFailure(path, contents, error);
  }
}

/** Whether this process may create files in `dir` (false on a read-only mount, or without permission). */
export function folderIsWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A read-only connection to a store in a folder no file can be made in (a read-only mount, a
 * copy kept for the record). SQLite reads a WAL-mode file only beside its `-shm` file, which it
 * cannot make there. Without a `-wal` file beside it, every committed transaction is in the file
 * itself (the last connection checkpointed it as it closed), so its bytes are read into memory
 * and opened there, marked in the header (bytes 18 and 19, 2 for WAL) as a rollback-journal file,
 * which an in-memory database can be; the pages are the same.
 */
function openInReadOnlyFolder(path: string, contents: string): Database.Database {
  if (existsSync(`${path}-wal`)) {
    if (existsSync(`${path}-shm`)) return new Database(path, { readonly: true, fileMustExist: true });
    throw new Error(
      `${path} cannot be read where it is: its folder is read-only, and the ${contents}'s latest changes are in ${path}-wal, ` +
        'which SQLite reads only with a -shm file it cannot make there. Copy the folder somewhere writable and pass that path instead.',
    );
  }
  const bytes = readFileSync(path);
  if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return new Database(bytes, { readonly: true });
}
