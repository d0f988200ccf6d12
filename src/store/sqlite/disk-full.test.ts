import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDiskFull } from './disk-full.js';
import { toolEndedInput } from '../testing/event-store-fixtures.js';
import { openSqliteEventStore } from './sqlite-event-store.js';
import { openSqliteTaskStore } from './sqlite-task-store.js';
import { RUN_ID, childTask, createdTask, handoffOf, rootTask } from '../testing/task-store-fixtures.js';
import { checkEventLog } from '../testing/check-event-log.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** What `work` rejected with; fails the test when it resolved. */
async function thrown(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject');
}

describe('isDiskFull', () => {
  it('recognises SQLite and Node saying the disk is full, also wrapped as a cause', async () => {
    const sqliteFull = new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
    expect(isDiskFull(sqliteFull)).toBe(true);
    expect(isDiskFull(withCode('ENOSPC: no space left on device, write', 'ENOSPC'))).toBe(true);
    expect(isDiskFull(withCode('EDQUOT: disk quota exceeded, write', 'EDQUOT'))).toBe(true);
    const wrapped = new Error('Could not write events', { cause: new Error('the flush failed', { cause: sqliteFull }) });
    expect(isDiskFull(wrapped)).toBe(true);
  });

  it('takes nothing else for a full disk', async () => {
    expect(isDiskFull(new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'))).toBe(false);
    expect(isDiskFull(new Database.SqliteError('database is locked', 'SQLITE_BUSY'))).toBe(false);
    expect(isDiskFull(withCode('EACCES: permission denied', 'EACCES'))).toBe(false);
    expect(isDiskFull(new Error('no space left on device'))).toBe(false);
    expect(isDiskFull('ENOSPC')).toBe(false);
    expect(isDiskFull(null)).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    const loop: Error & { cause?: unknown } = new Error('caused by itself');
    loop.cause = loop;
    expect(isDiskFull(loop)).toBe(false);
  });
});

/** Why this machine cannot mount the small filesystem the test fills, or null when it can. */
function smallFilesystemUnavailable(): string | null {
  if (process.platform !== 'linux') return 'it needs Linux, to mount a tmpfs';
  if (process.getuid?.() !== 0) return 'it needs root, to mount a 1 MiB tmpfs';
  return null;
}

const unavailable = smallFilesystemUnavailable();
// CI sets this so a missing need fails the test instead of skipping it.
const required = process.env['COLONY_REQUIRE_SANDBOX_TESTS'] === '1';
if (unavailable !== null && !required) console.warn(`skipping the full-disk test: ${unavailable}`);

/** Appends to `path` until the filesystem refuses even one byte; returns that refusal. */
function fillDisk(path: string): NodeJS.ErrnoException {
  for (const chunk of [65_536, 4_096, 1]) {
    try {
      for (;;) appendFileSync(path, Buffer.alloc(chunk, 0x2e));
    } catch (error) {
      if (chunk === 1) return error as NodeJS.ErrnoException;
    }
  }
  throw new Error('unreachable: the one-byte appends end only by throwing');
}

describe.skipIf(unavailable !== null && !required)('a store on a full disk (needs root, to mount a 1 MiB tmpfs)', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-full-'));
    chmodSync(dir, 0o755);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', dir]);
  });

  afterAll(async () => {
    execFileSync('umount', [dir]);
    rmdirSync(dir);
  });

  it('refuses writes with an error isDiskFull recognises, keeps the buffered events, and writes them once space is back', async () => {
    const path = join(dir, 'colony.db');
    const filler = join(dir, 'filler');
    const events = openSqliteEventStore(path, { autoFlushMs: 3_600_000 });
    const tasks = openSqliteTaskStore(path);
    try {
      const root = createdTask(await tasks.createTask(rootTask(), 100));
      await tasks.createTask(childTask('worker-1', root.id), 110);
      const claimed = await tasks.claim({ runId: RUN_ID, holder: 'runner-a', kinds: ['worker'], now: 1_000, leaseMs: 60_000 });
      const lease = { holder: 'runner-a', attempt: claimed?.attempt ?? 0 };
      const subject = { runId: RUN_ID, agentId: 'worker' };
      events.append(toolEndedInput(subject, 0, 'written before the disk filled'));
      await events.flush();

      const refusal = fillDisk(filler);
      expect(refusal.code).toBe('ENOSPC');
      expect(isDiskFull(refusal)).toBe(true);

      const tasksBefore = await tasks.listTasks(RUN_ID);
      expect(isDiskFull(await thrown(tasks.createTask(childTask('worker-2', root.id), 1_100)))).toBe(true);
      expect(isDiskFull(await thrown(tasks.complete('worker-1', lease, handoffOf('done', 'Built.'), 1_200)))).toBe(true);
      expect(await tasks.listTasks(RUN_ID)).toEqual(tasksBefore);
      expect(await tasks.deliveredHandoffs(RUN_ID)).toEqual([]);

      // Large enough that the WAL must grow into space the disk no longer has.
      const outputs = Array.from({ length: 100 }, (_, index) => `event ${index + 2} `.padEnd(2_000, '.'));
      const appended = events.appendMany(outputs.map((output, index) => toolEndedInput(subject, index + 1, output)));
      expect(await events.lastSeq()).toBe(101);
      const failure = await thrown(events.flush());
      expect(isDiskFull(failure)).toBe(true);
      expect(failure instanceof Error && failure.message).toMatch(/disk holding .*colony\.db is full.*100 unwritten events are kept in memory/);
      expect(isDiskFull(await thrown(events.flush()))).toBe(true);
      // The disk is full, not the log broken: appends still take events, which wait in memory.
      const late = events.append(toolEndedInput(subject, 101, 'recorded while the disk was full'));
      expect(await events.lastSeq()).toBe(102);
      // And reading goes on: what is on disk, then what waits in memory.
      const whileFull = await events.read();
      expect(whileFull.map((event) => event.seq)).toEqual(Array.from({ length: 102 }, (_, index) => index + 1));
      expect(whileFull.slice(1).map((event) => event.id)).toEqual([...appended, late].map((event) => event.id));
      expect((await events.read({ afterSeq: 100, limit: 1 })).map((event) => event.seq)).toEqual([101]);
      const reader = openSqliteEventStore(path);
      expect((await reader.read()).map((event) => event.seq)).toEqual([1]);
      await reader.close();

      rmSync(filler);
      await events.flush();
      const stored = await events.read();
      expect(stored.map((event) => event.seq)).toEqual(Array.from({ length: 102 }, (_, index) => index + 1));
      expect(stored.slice(1).map((event) => (event.type === 'tool.ended' ? event.data.output : null))).toEqual([...outputs, 'recorded while the disk was full']);
      const check = await checkEventLog(path);
      expect(check).toMatchObject({ integrity: ['ok'], invalid: [], seqs: stored.map((event) => event.seq) });
      expect(new Set(check.ids).size).toBe(102);

      expect((await tasks.createTask(childTask('worker-2', root.id), 1_300)).ok).toBe(true);
      expect(await tasks.complete('worker-1', lease, handoffOf('done', 'Built.'), 1_400)).toMatchObject({ ok: true, delivered: { fromTaskId: 'worker-1' } });
    } finally {
      rmSync(filler, { force: true });
      await events.close();
      await tasks.close();
    }
  });
});
