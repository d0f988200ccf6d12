import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore } from './event-store.js';
import { toolStartedInput } from '../testing/event-store-fixtures.js';
import { createGroupFlush } from './group-flush.js';
import { openSqliteEventStore } from '../sqlite/sqlite-event-store.js';

describe('durable batching', () => {
  let dir: string;
  let store: EventStore;
  let flushes: number;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colony-group-flush-'));
    const opened = openSqliteEventStore(join(dir, 'colony.db'));
    flushes = 0;
    store = {
      ...opened,
      append: (input) => opened.append(input),
      appendMany: (inputs) => opened.appendMany(inputs),
      read: (query) => opened.read(query),
      lastSeq: () => opened.lastSeq(),
      close: () => opened.close(),
      flush: async () => {
        flushes += 1;
        await opened.flush();
      },
    };
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the events of every agent that asks in one turn durable with one write, before any of them goes on', async () => {
    const flush = createGroupFlush(store);
    const agents = Array.from({ length: 20 }, (_, index) => async () => {
      store.append(toolStartedInput({ runId: 'run-1', agentId: `agent-${index}` }, 1));
      await flush();
      // Once its flush resolved, its event is on disk for any other reader.
      const reader = openSqliteEventStore(join(dir, 'colony.db'));
      const seen = (await reader.read({ agentId: `agent-${index}` })).length;
      await reader.close();
      return seen;
    });
    const seen = await Promise.all(agents.map((agent) => agent()));
    expect(seen).toEqual(Array.from({ length: 20 }, () => 1));
    expect(flushes).toBe(1);
    // A later ask is a new batch.
    store.append(toolStartedInput({ runId: 'run-1', agentId: 'agent-late' }, 1));
    await flush();
    expect(flushes).toBe(2);
  });

  it('rejects every caller of a batch whose write failed, and the next batch tries again', async () => {
    let failNext = true;
    const failing: EventStore = {
      ...store,
      flush: async () => {
        if (failNext) {
          failNext = false;
          throw new Error('the disk is full');
        }
        await store.flush();
      },
    };
    const flush = createGroupFlush(failing);
    const results = await Promise.allSettled([flush(), flush()]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    await expect(flush()).resolves.toBeUndefined();
  });
});
