import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeEventStoreConformance } from '../testing/event-store.conformance.js';
import { toolEndedInput, toolStartedInput, withoutSeq } from '../testing/event-store-fixtures.js';
import type { EventStore } from '../events/event-store.js';
import { openEventLogConnection, openSqliteEventStore } from './sqlite-event-store.js';
import type { SqliteEventStoreOptions } from './sqlite-event-store.js';
import { sqliteStoreUnderTest } from '../testing/sqlite-store-under-test.js';
import { DamagedStoreError } from './damaged-store-error.js';

const subject = { runId: 'run-1', agentId: 'agent-a' };

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function countRows(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS count FROM events').get() as { count: number }).count;
  } finally {
    db.close();
  }
}

describeEventStoreConformance('sqlite', () => sqliteStoreUnderTest('colony-events-', (path) => openSqliteEventStore(path)));

describe('openSqliteEventStore', () => {
  let dir: string;
  const opened: EventStore[] = [];

  function open(path: string, options?: SqliteEventStoreOptions): EventStore {
    const store = openSqliteEventStore(path, options);
    opened.push(store);
    return store;
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-events-'));
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the file and its folders, in WAL mode, with a versioned schema', async () => {
    const path = join(dir, 'nested', 'deeper', 'events.db');
    open(path).append(toolStartedInput(subject, 1));
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT part, version FROM schema_versions').all()).toEqual([{ part: 'events', version: 1 }]);
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").all();
      expect(indexes).toEqual(
        expect.arrayContaining([{ name: 'events_by_run' }, { name: 'events_by_agent' }, { name: 'events_by_type' }]),
      );
    } finally {
      db.close();
    }
  });

  it('writes through a WAL connection that syncs every commit, so a flushed event survives a power loss', async () => {
    // synchronous is a setting of each connection, so it can only be read on the store's own.
    const db = openEventLogConnection(join(dir, 'events.db'), 1_234);
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1_234);
    } finally {
      db.close();
    }
  });

  it('syncs nothing when opened not durable, for measuring what durability costs', async () => {
    const path = join(dir, 'events.db');
    const db = openEventLogConnection(path, 1_234, false);
    try {
      expect(db.pragma('synchronous', { simple: true })).toBe(0); // OFF
    } finally {
      db.close();
    }
    const store = open(path, { durable: false });
    store.append(toolStartedInput(subject, 1));
    await store.close();
    expect((await open(path).read()).map((event) => event.seq)).toEqual([1]);
  });

  it('reports a file that is not SQLite clearly and leaves it alone', async () => {
    const path = join(dir, 'notes.db');
    const garbage = 'These are my notes, not a database.\n'.repeat(200);
    writeFileSync(path, garbage);
    expect(() => open(path)).toThrow(
      /notes\.db is not a SQLite database, so it cannot hold colony's event log\..*Pass the path of a store colony created/s,
    );
    expect(readFileSync(path, 'utf8')).toBe(garbage);
  });

  it('reports a log cut short as damaged, naming the file and the command that moves its folder aside, and leaves it alone', async () => {
    const path = join(dir, 'colony.db');
    const store = open(path);
    for (let n = 1; n <= 200; n += 1) store.append(toolStartedInput(subject, n));
    await store.close();
    truncateSync(path, 1_000);
    let thrown: unknown;
    try {
      open(path);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DamagedStoreError);
    expect(thrown).toMatchObject({ path, message: expect.stringContaining(`${path} is damaged (SQLite reads: database disk image is malformed)`) as string });
    expect((thrown as Error).message).toContain(`To start again and keep what is there, run: colony clean --damaged --state ${dir} `);
    expect((thrown as Error).message).toContain(`moves it aside to ${dir}.damaged, kept, never deleted, and out of git status`);
    expect(statSync(path).size).toBe(1_000);
  });

  it('opens read-only when asked: reads what is there, appends nothing, creates nothing', async () => {
    const path = join(dir, 'colony.db');
    const writer = open(path);
    writer.append(toolStartedInput(subject, 1));
    await writer.flush();
    const reader = openSqliteEventStore(path, { readOnly: true });
    try {
      expect((await reader.read()).map((event) => event.seq)).toEqual([1]);
      expect(() => reader.append(toolStartedInput(subject, 2))).toThrow(`${path} was opened to be read only, so no event can be appended to it.`);
      writer.append(toolStartedInput(subject, 2));
      await writer.flush();
      expect((await reader.read()).map((event) => event.seq)).toEqual([1, 2]);
    } finally {
      await reader.close();
      await writer.close();
    }
    expect(() => openSqliteEventStore(join(dir, 'none.db'), { readOnly: true })).toThrow(/none\.db does not exist, so there is no event log to read/);
    expect(existsSync(join(dir, 'none.db'))).toBe(false);
  });

  it('refuses a SQLite database that another program made', async () => {
    const path = join(dir, 'app.db');
    const db = new Database(path);
    db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
    db.close();
    expect(() => open(path)).toThrow(/colony did not create \(it has a table "customers"/);
    expect(countTables(path)).toEqual(['customers']);
  });

  it('refuses a log written by a newer colony', async () => {
    const path = join(dir, 'events.db');
    await open(path).close();
    const db = new Database(path);
    db.prepare("UPDATE schema_versions SET version = 7 WHERE part = 'events'").run();
    db.close();
    expect(() => open(path)).toThrow(/version 7, newer than the version 1 this colony knows\. Upgrade colony/);
  });

  it('writes buffered events soon after without a flush, and at once past the threshold', async () => {
    const path = join(dir, 'events.db');
    const store = open(path, { autoFlushMs: 500 });
    store.append(toolStartedInput(subject, 1));
    expect(countRows(path)).toBe(0);
    await nextTurn();
    // Not at the next turn: writes are grouped so each sync to disk carries many events.
    expect(countRows(path)).toBe(0);
    await expect.poll(() => countRows(path), { timeout: 5000 }).toBe(1);
    for (let step = 0; step < 255; step += 1) store.append(toolStartedInput(subject, step));
    expect(countRows(path)).toBe(1);
    store.append(toolStartedInput(subject, 255));
    expect(countRows(path)).toBe(257);
  });

  it('writes what is buffered on close', async () => {
    const path = join(dir, 'events.db');
    const store = open(path);
    const appended = store.append(toolEndedInput(subject, 1, 'last words'));
    await store.close();
    expect((await open(path).read()).map(withoutSeq)).toEqual([appended]);
  });

  it('stamps with its clock and keeps ts non-decreasing across reopening', async () => {
    const path = join(dir, 'events.db');
    open(path, { now: () => 9_000 }).append(toolStartedInput(subject, 1));
    for (const store of opened.splice(0)) await store.close();
    const store = open(path, { now: () => 8_000 });
    const event = store.append(toolStartedInput(subject, 2));
    expect(event.ts).toBe(9_000);
    expect(await store.read({ afterSeq: 1 })).toEqual([{ ...event, seq: 2 }]);
  });

  it('lets a reader connection see what the writer flushed, and its lastSeq follow', async () => {
    const path = join(dir, 'events.db');
    const writer = open(path);
    const reader = open(path);
    writer.append(toolStartedInput(subject, 1));
    expect(await reader.read()).toEqual([]);
    await writer.flush();
    expect((await reader.read()).map((event) => event.seq)).toEqual([1]);
    writer.appendMany([toolStartedInput(subject, 2), toolStartedInput(subject, 3)]);
    await writer.flush();
    expect(await reader.lastSeq()).toBe(3);
    expect((await reader.read({ afterSeq: 1 })).map((event) => event.seq)).toEqual([2, 3]);
  });

  it('keeps events in memory when the file is locked, and writes them once it is free', async () => {
    const path = join(dir, 'events.db');
    const store = open(path, { busyTimeoutMs: 20 });
    const blocker = new Database(path);
    blocker.exec('BEGIN IMMEDIATE');
    try {
      store.append(toolStartedInput(subject, 1));
      await expect(store.flush()).rejects.toThrow(/locked by another writer.*1 unwritten event is kept in memory/s);
      await nextTurn();
      expect(() => store.append(toolStartedInput(subject, 2))).toThrow(/locked by another writer/);
    } finally {
      blocker.exec('COMMIT');
      blocker.close();
    }
    store.append(toolStartedInput(subject, 3));
    expect(await store.lastSeq()).toBe(2);
    await store.flush();
    expect(countRows(path)).toBe(2);
    expect((await store.read()).map((event) => event.type === 'tool.started' && event.data.step)).toEqual([1, 3]);
  });

  it('waits for another process that holds the write lock instead of failing', async () => {
    const path = join(dir, 'events.db');
    const release = join(dir, 'release');
    const store = open(path, { busyTimeoutMs: 30_000 });
    store.append(toolStartedInput(subject, 1));
    await store.flush();
    const holder = spawn(process.execPath, ['--input-type=module', '-e', LOCK_HOLDER_SOURCE], {
      cwd: join(import.meta.dirname, '../../..'),
      env: { ...process.env, LOG_PATH: path, RELEASE_PATH: release },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(holder, 'exit');
    try {
      const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe('locked');
      store.append(toolStartedInput(subject, 2));
      // The holder lets go only once this file exists, so the flush below starts while the lock is held.
      writeFileSync(release, '');
      await store.flush();
      expect(countRows(path)).toBe(2);
      expect((await lines.next()).value).toBe('released');
      expect((await exited)[0]).toBe(0);
    } finally {
      holder.kill();
    }
  });

  it('reports a second writing connection instead of losing events', async () => {
    const path = join(dir, 'events.db');
    const first = open(path);
    const second = open(path);
    first.append(toolStartedInput(subject, 1));
    await first.flush();
    second.append(toolStartedInput(subject, 2));
    await expect(second.flush()).rejects.toThrow(/takes one writing process.*must wait for the first to end, and other processes may only read it/s);
    expect((await first.read()).map((event) => event.seq)).toEqual([1]);
    opened.splice(opened.indexOf(second), 1);
  });
});

/**
 * A separate process that holds the write lock of the log at LOG_PATH until a file appears at
 * RELEASE_PATH, then commits and says so.
 */
const LOCK_HOLDER_SOURCE = `
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
const db = new Database(process.env.LOG_PATH);
db.exec('BEGIN IMMEDIATE');
console.log('locked');
while (!existsSync(process.env.RELEASE_PATH)) await new Promise((resolve) => setTimeout(resolve, 5));
db.exec('COMMIT');
db.close();
console.log('released');
`;

/**
 * A separate process that follows the log at `path` the way `colony events --follow` would,
 * printing how far it has read after each read that found something new.
 */
const FOLLOWER_SOURCE = `
const { openSqliteEventStore } = await import(process.env.STORE_MODULE);
const store = openSqliteEventStore(process.env.LOG_PATH);
const total = Number(process.env.TOTAL);
const steps = [];
let afterSeq = 0;
console.log('ready');
while (afterSeq < total) {
  const page = await store.read({ afterSeq });
  if (page.length === 0) { await new Promise((resolve) => setTimeout(resolve, 2)); continue; }
  for (const event of page) steps.push(event.data.step);
  afterSeq = page[page.length - 1].seq;
  console.log('seen ' + afterSeq);
}
await store.close();
console.log('steps ' + JSON.stringify(steps));
`;

describe('a reader in another process', () => {
  it('follows the log while this process writes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colony-events-'));
    const path = join(dir, 'events.db');
    const writer = openSqliteEventStore(path);
    const batches = 5;
    const batchSize = 100;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', FOLLOWER_SOURCE], {
      cwd: join(import.meta.dirname, '../../..'),
      env: {
        ...process.env,
        STORE_MODULE: new URL('./sqlite-event-store.ts', import.meta.url).href,
        LOG_PATH: path,
        TOTAL: String(batches * batchSize),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const nextLine = async (): Promise<string> => {
        const line = await lines.next();
        if (line.done === true) throw new Error('the reader process ended early');
        return line.value;
      };
      expect(await nextLine()).toBe('ready');
      let step = 0;
      for (let batch = 1; batch <= batches; batch += 1) {
        for (let index = 0; index < batchSize; index += 1) writer.append(toolStartedInput(subject, step++));
        await writer.flush();
        // The reader must catch up with each batch while the writer stays open and writing.
        let seen = 0;
        while (seen < batch * batchSize) seen = Number((await nextLine()).replace('seen ', ''));
        expect(seen).toBe(batch * batchSize);
      }
      const summary = await nextLine();
      expect(JSON.parse(summary.replace('steps ', ''))).toEqual(Array.from({ length: step }, (_, index) => index));
      expect((await exited)[0]).toBe(0);
    } finally {
      child.kill();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function countTables(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((row) => (row as { name: string }).name);
  } finally {
    db.close();
  }
}
