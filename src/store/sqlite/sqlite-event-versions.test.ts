import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_VERSION } from '../../events/event-types.js';
import { openSqliteEventStore } from './sqlite-event-store.js';

describe('a log an earlier version wrote', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A log holding one event of today's, then one a version-1 colony wrote as `agent.resumed`. */
  async function logWithVersionOneEvent(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'colony-versions-'));
    dirs.push(dir);
    const path = join(dir, 'colony.db');
    const store = openSqliteEventStore(path);
    store.append({ runId: 'run-1', agentId: 'worker-1', type: 'agent.parked', data: { step: 3, kind: 'rate-limit', message: 'rate limited', attempts: 3, waitMs: 4_000 } });
    await store.flush();
    await store.close();
    const db = new Database(path);
    db.prepare('INSERT INTO events (seq, id, v, run_id, agent_id, type, ts, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      2,
      'event-old',
      1,
      'run-1',
      'worker-1',
      'agent.resumed',
      1_700_000_000_000,
      JSON.stringify({ step: 3, parkedMs: 4_000 }),
    );
    db.close();
    return path;
  }

  it('reads a parked agent going on, recorded as agent.resumed in version 1, as agent.unparked', async () => {
    const store = openSqliteEventStore(await logWithVersionOneEvent());
    try {
      const events = await store.read({ runId: 'run-1' });
      expect(events.map((event) => [event.type, event.v])).toEqual([
        ['agent.parked', EVENT_VERSION],
        ['agent.unparked', 1],
      ]);
      expect(events[1]?.type === 'agent.unparked' ? events[1].data : null).toEqual({ step: 3, parkedMs: 4_000 });
    } finally {
      await store.close();
    }
  });

  it('finds it when asked for agent.unparked, and not when asked for other types', async () => {
    const store = openSqliteEventStore(await logWithVersionOneEvent());
    try {
      expect((await store.read({ types: ['agent.unparked'] })).map((event) => event.seq)).toEqual([2]);
      expect((await store.read({ types: ['agent.parked'] })).map((event) => event.seq)).toEqual([1]);
      expect(await store.read({ types: ['run.resumed'] })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('reads the fields version 3 renamed under their names now: a restored agent\'s generation as its attempt, the run hold\'s seq as andonSeq', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colony-versions-'));
    dirs.push(dir);
    const path = join(dir, 'colony.db');
    await openSqliteEventStore(path).close();
    const db = new Database(path);
    const insert = db.prepare('INSERT INTO events (seq, id, v, run_id, agent_id, type, ts, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run(1, 'event-v2', 2, 'run-1', 'worker-1', 'agent.restored', 1_700_000_000_000, JSON.stringify({ generation: 2, step: 5, interrupted: 1, notStarted: 0 }));
    insert.run(2, 'andon-v2', 2, 'run-1', 'system', 'andon.changed', 1_700_000_000_001, JSON.stringify({ taskId: null, paused: true, reason: 'lunch', by: 'user', holdSeq: 4 }));
    db.close();
    const store = openSqliteEventStore(path);
    try {
      store.append({ runId: 'run-1', agentId: 'worker-1', type: 'agent.restored', data: { attempt: 3, step: 9, interrupted: 0, notStarted: 0 } });
      const events = await store.read({ types: ['agent.restored'] });
      expect(events.map((event) => [event.v, event.data])).toEqual([
        [2, { attempt: 2, step: 5, interrupted: 1, notStarted: 0 }],
        [EVENT_VERSION, { attempt: 3, step: 9, interrupted: 0, notStarted: 0 }],
      ]);
      expect((await store.read({ types: ['andon.changed'] })).map((event) => event.data)).toEqual([{ taskId: null, paused: true, reason: 'lunch', by: 'user', andonSeq: 4 }]);
    } finally {
      await store.close();
    }
  });
});
