import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolEndedInput } from '../testing/event-store-fixtures.js';
import { openSqliteEventStore } from './sqlite-event-store.js';
import { checkEventLog, type EventLogCheck } from '../testing/check-event-log.js';
import { readWalFrames } from '../testing/wal-frames.js';

const WRITER = join(import.meta.dirname, '..', 'testing', 'append-until-killed.ts');
const FRAME_HEADER_BYTES = 24;

/** 1..count, what a log's seqs must be. */
function oneTo(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index + 1);
}

interface KilledWriter {
  /** The seq of the first event this writer appended. */
  readonly first: number;
  /** The last seq it reported flushed before it was killed: everything up to it is durable. */
  readonly flushed: number;
}

/**
 * Runs the writer on `path` until it reports at least `target` events flushed, then SIGKILLs
 * it, mid-loop: the kill lands wherever the writer happens to be (between writes, inside a
 * transaction, inside a checkpoint), never at a point it chose.
 */
async function appendUntilKilled(path: string, target: number): Promise<KilledWriter> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER], {
    cwd: join(import.meta.dirname, '../../..'),
    env: { ...process.env, STORE_PATH: path, BATCH_SIZE: '8' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let first = 0;
  let flushed = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    const [word, seq] = line.split(' ');
    if (word === 'first') first = Number(seq);
    if (word === 'flushed') flushed = Number(seq);
    if (flushed >= target) {
      child.kill('SIGKILL');
      break;
    }
  }
  const [code, signal] = await exited;
  expect({ code, signal }, 'the writer must die by the kill, not end on its own').toEqual({ code: null, signal: 'SIGKILL' });
  return { first, flushed };
}

/** Checks a log opened after a crash: sound pages, seqs 1..N with no gap, every event readable. */
async function expectSoundLog(path: string): Promise<EventLogCheck> {
  const check = await checkEventLog(path);
  expect(check.integrity).toEqual(['ok']);
  expect(check.invalid).toEqual([]);
  expect(check.seqs).toEqual(oneTo(check.seqs.length));
  return check;
}

/** Appends one more event after a crash and checks it takes the next seq, N + 1. */
async function expectAppendingContinues(path: string, count: number): Promise<void> {
  const store = openSqliteEventStore(path);
  try {
    expect(await store.lastSeq()).toBe(count);
    const event = store.append(toolEndedInput({ runId: 'run-crash', agentId: 'after' }, 1, 'after the crash'));
    await store.flush();
    expect(await store.read({ afterSeq: count })).toEqual([{ ...event, seq: count + 1 }]);
  } finally {
    await store.close();
  }
  expect((await expectSoundLog(path)).seqs).toHaveLength(count + 1);
}

describe('a SQLite event log after a crash mid-write', () => {
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-torn-'));
    chmodSync(dir, 0o755);
  });

  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the log's db and WAL (not its -shm, which SQLite rebuilds), the WAL cut to `walBytes`. */
  function copyWithWalCutTo(path: string, name: string, walBytes: number): string {
    mkdirSync(join(dir, name));
    const copy = join(dir, name, 'colony.db');
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    truncateSync(`${copy}-wal`, walBytes);
    return copy;
  }

  it('opens with every flushed event, no seq gap, after the writer is SIGKILLed again and again', async () => {
    const path = join(dir, 'colony.db');
    let reported = 0;
    for (let round = 0; round < 3; round += 1) {
      const writer = await appendUntilKilled(path, reported + 1_500);
      const check = await expectSoundLog(path);
      expect(writer.first, 'each writer goes on from the last event the one before it stored').toBe(reported + 1);
      // A kill loses no flushed event, and the batch it interrupted is there whole or not at all.
      expect(check.seqs.length).toBeGreaterThanOrEqual(writer.flushed);
      expect(check.seqs.length % 8).toBe(0);
      reported = check.seqs.length;
    }
    await expectAppendingContinues(path, reported);
  }, 120_000);

  it('discards a transaction whose last WAL frame was torn, keeping every one before it', async () => {
    const path = join(dir, 'colony.db');
    const writer = await appendUntilKilled(path, 2_000);
    const wal = readFileSync(`${path}-wal`);
    const { pageSize, frames } = readWalFrames(wal);
    const commits = frames.filter((frame) => frame.commitSize > 0);
    const [before, last] = commits.slice(-2);
    if (before === undefined || last === undefined) throw new Error(`the WAL holds ${commits.length} transactions; the test needs two`);
    const frameEnd = (offset: number): number => offset + FRAME_HEADER_BYTES + pageSize;

    const intact = await expectSoundLog(copyWithWalCutTo(path, 'intact', wal.length));
    expect(intact.seqs.length).toBeGreaterThanOrEqual(writer.flushed);
    // What the log holds when it ends cleanly after the transaction before the last one.
    const previous = await expectSoundLog(copyWithWalCutTo(path, 'previous', frameEnd(before.offset)));
    expect(previous.seqs.length).toBeLessThan(intact.seqs.length);
    expect(previous.ids).toEqual(intact.ids.slice(0, previous.seqs.length));

    // The WAL file may run on past the log it holds (SQLite writes it again from the start after a
    // checkpoint), so the cuts are placed at the last committed frame, where a crash would tear it.
    const cuts = {
      'a few hundred bytes short of its end': frameEnd(last.offset) - 300,
      'an odd number of bytes into its frame header': last.offset + 13,
    };
    for (const [where, walBytes] of Object.entries(cuts)) {
      const copy = copyWithWalCutTo(path, where.replaceAll(' ', '-'), walBytes);
      const torn = await expectSoundLog(copy);
      expect(torn.ids, `the last frame cut ${where}`).toEqual(previous.ids);
      await expectAppendingContinues(copy, torn.seqs.length);
    }
  }, 120_000);

  it('falls back to what the checkpoint stored when the WAL header itself was torn', async () => {
    const path = join(dir, 'colony.db');
    const store = openSqliteEventStore(path);
    const subject = { runId: 'run-crash', agentId: 'writer' };
    try {
      store.appendMany(oneTo(50).map((step) => toolEndedInput(subject, step, `before the checkpoint ${step}`)));
      await store.flush();
      const other = new Database(path);
      try {
        // The next commit starts the WAL again from its header: the write a crash can tear.
        expect(other.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
      } finally {
        other.close();
      }
      store.appendMany(oneTo(50).map((step) => toolEndedInput(subject, step, `after the checkpoint ${step}`)));
      await store.flush();
      expect(readWalFrames(readFileSync(`${path}-wal`)).frames.length).toBeGreaterThan(0);
      const copy = copyWithWalCutTo(path, 'torn-header', 17);
      expect((await expectSoundLog(copy)).seqs).toEqual(oneTo(50));
      await expectAppendingContinues(copy, 50);
    } finally {
      await store.close();
    }
  });
});
