import { afterEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../events/event-types.js';
import type { EventStore } from '../events/event-store.js';
import { describeEventStoreConformance } from '../testing/event-store.conformance.js';
import { toolStartedInput, withoutSeq } from '../testing/event-store-fixtures.js';
import { describeWithPostgres, dropSchema, freshSchema, postgresStoreUnderTest, usePostgresCluster } from '../testing/postgres-store-under-test.js';
import { openPostgresEventStore } from './postgres-store.js';
import type { PostgresStoreOptions } from './postgres-store.js';

describeWithPostgres('the PostgreSQL event log', () => {
  const cluster = usePostgresCluster();

  describeEventStoreConformance('postgres', async () =>
    postgresStoreUnderTest(await cluster().database('event_conformance'), (url, schema) => openPostgresEventStore({ url, schema })),
  );

  const opened: EventStore[] = [];
  const schemas: string[] = [];
  let url = '';

  async function open(options: Partial<PostgresStoreOptions> = {}): Promise<EventStore> {
    url = await cluster().database('event_log');
    const schema = options.schema ?? schemas[0] ?? freshSchema();
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = await openPostgresEventStore({ url, schema, ...options });
    opened.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await dropSchema(url, schema);
  });

  it('numbers the events of two writers in commit order, so a reader following by afterSeq misses none', async () => {
    const [first, second, reader] = [await open(), await open(), await open()];
    const perWriter = 400;
    const seen: ColonyEvent[] = [];
    let following = true;
    const follow = (async () => {
      let afterSeq = 0;
      while (following || seen.length < 2 * perWriter) {
        const page = await reader.read({ afterSeq });
        seen.push(...page);
        afterSeq = page.at(-1)?.seq ?? afterSeq;
        if (page.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const write = async (store: EventStore, agentId: string): Promise<void> => {
      for (let step = 0; step < perWriter; step += 1) {
        store.append(toolStartedInput({ runId: 'run-1', agentId }, step));
        // Small, uneven batches, so the two writers' transactions interleave.
        if (step % (agentId === 'writer-a' ? 3 : 7) === 0) await store.flush();
      }
      await store.flush();
    };
    await Promise.all([write(first, 'writer-a'), write(second, 'writer-b')]);
    following = false;
    await follow;
    const all = await reader.read();
    expect(all.map((event) => event.seq)).toEqual(Array.from({ length: 2 * perWriter }, (_, index) => index + 1));
    // The follower saw every event once, in seq order, although it read while both wrote.
    expect(seen.map((event) => event.id)).toEqual(all.map((event) => event.id));
    for (const agentId of ['writer-a', 'writer-b']) {
      const own = all.filter((event) => event.agentId === agentId);
      expect(own.map((event) => (event.type === 'tool.started' ? event.data.step : -1))).toEqual(Array.from({ length: perWriter }, (_, index) => index));
      const stamps = own.map((event) => event.ts);
      expect(stamps).toEqual([...stamps].sort((left, right) => left - right));
    }
  });

  it('writes buffered events without a flush, soon after and at once past the threshold', async () => {
    const writer = await open({ autoFlushMs: 200 });
    const reader = await open();
    const first = writer.append(toolStartedInput({ runId: 'run-1', agentId: 'a' }, 1));
    expect(await reader.read()).toEqual([]);
    await expect.poll(async () => (await reader.read()).map(withoutSeq), { timeout: 5_000 }).toEqual([first]);
    for (let step = 0; step < 256; step += 1) writer.append(toolStartedInput({ runId: 'run-1', agentId: 'a' }, step));
    await expect.poll(() => reader.lastSeq(), { timeout: 5_000 }).toBe(257);
  });

  it('lets flushes asked for before a write starts share it, so while the database is down they wait out one retry, not one each', async () => {
    const writer = await open({ retryMs: 300 });
    await cluster().stopServer();
    let restarted = false;
    try {
      const appended: ColonyEvent[] = [];
      const flushes: Promise<unknown>[] = [];
      for (let step = 1; step <= 5; step += 1) {
        appended.push(writer.append(toolStartedInput({ runId: 'run-1', agentId: 'a' }, step)) as ColonyEvent);
        flushes.push(writer.flush().then(() => null, (error: unknown) => error));
      }
      const failures = await Promise.all(flushes);
      expect(failures.every((failure) => failure instanceof Error)).toBe(true);
      expect(new Set(failures).size).toBe(1);
      await cluster().startServer();
      restarted = true;
      await writer.flush();
      expect((await writer.read()).map(withoutSeq)).toEqual(appended);
    } finally {
      if (!restarted) await cluster().startServer();
    }
  });

  it('keeps events buffered while the database is down and writes them, once each, when it is back', async () => {
    const writer = await open({ retryMs: 300 });
    const kept = writer.append(toolStartedInput({ runId: 'run-1', agentId: 'a' }, 1));
    await writer.flush();
    await cluster().stopServer();
    let restarted = false;
    try {
      const waiting = writer.append(toolStartedInput({ runId: 'run-1', agentId: 'a' }, 2));
      const failure = writer.flush();
      await expect(failure).rejects.toThrow(/Could not write events to the event log in database "event_log" on 127\.0\.0\.1:\d+ .*1 unwritten event is kept in memory/s);
      await expect(failure).rejects.toThrow(/postgres:\/\/colony:\*\*\*@127\.0\.0\.1/);
      const message = await failure.catch((error: unknown) => (error instanceof Error ? `${error.message}\n${String(error.cause)}` : ''));
      expect(message).not.toContain(cluster().password);
      await cluster().startServer();
      restarted = true;
      await writer.flush();
      expect((await writer.read()).map(withoutSeq)).toEqual([kept, waiting]);
    } finally {
      if (!restarted) await cluster().startServer();
    }
  });
});
