import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_VERSION } from '../../events/event-types.js';
import type { ColonyEvent, RecordedEvent } from '../../events/event-types.js';
import {
  handoffSubmittedInput,
  modelRespondedInput,
  toolEndedInput,
  toolStartedInput,
  withoutSeq,
} from './event-store-fixtures.js';
import type { EventInput, EventQuery, EventStore } from '../events/event-store.js';

/** What the suite needs of an implementation: a fresh empty store, and how to dispose of it. */
export interface EventStoreUnderTest {
  readonly store: EventStore;
  /** Opens another connection to the same log, for stores that outlive a connection. */
  readonly reopen?: () => Promise<EventStore>;
  /** Closes every store it opened and removes what the store kept. */
  readonly cleanup: () => Promise<void>;
}

const subject = { runId: 'run-1', agentId: 'agent-a' };

/** A small log over two runs, three agents, four types and a spread of timestamps. */
function mixedInputs(): EventInput[] {
  const inputs: EventInput[] = [];
  const agents = [
    { runId: 'run-1', agentId: 'agent-a' },
    { runId: 'run-1', agentId: 'agent-b' },
    { runId: 'run-2', agentId: 'agent-c' },
  ];
  for (let step = 0; step < 10; step += 1) {
    for (const [index, agent] of agents.entries()) {
      const ts = 1_000 + step * 100 + index * 10;
      inputs.push(modelRespondedInput({ ...agent, ts }, step, `thinking about step ${step}`));
      inputs.push(toolStartedInput({ ...agent, ts }, step));
      inputs.push(toolEndedInput({ ...agent, ts: ts + 5 }, step, `output of step ${step}`));
    }
  }
  inputs.push({ runId: 'run-1', agentId: 'system', ts: 3_000, type: 'run.ended', data: { status: 'done', durationMs: 2000 } });
  return inputs;
}

/** What `read` returns, without the seqs, to compare with what `append` returned. */
async function readRecorded(store: EventStore, query?: EventQuery): Promise<RecordedEvent[]> {
  return (await store.read(query)).map(withoutSeq);
}

function filterLikeAStore(events: readonly ColonyEvent[], query: EventQuery): ColonyEvent[] {
  const matching = events.filter(
    (event) =>
      (query.afterSeq === undefined || event.seq > query.afterSeq) &&
      (query.runId === undefined || event.runId === query.runId) &&
      (query.agentId === undefined || event.agentId === query.agentId) &&
      (query.types === undefined || query.types.includes(event.type)) &&
      (query.since === undefined || event.ts >= query.since) &&
      (query.until === undefined || event.ts <= query.until),
  );
  return query.limit === undefined ? matching : matching.slice(0, query.limit);
}

/**
 * The one suite every EventStore implementation must pass. `open` is called before each test
 * and must return an empty store.
 */
export function describeEventStoreConformance(name: string, open: () => Promise<EventStoreUnderTest>): void {
  describe(`EventStore conformance: ${name}`, () => {
    let underTest: EventStoreUnderTest;
    let store: EventStore;

    beforeEach(async () => {
      underTest = await open();
      store = underTest.store;
    });

    afterEach(async () => {
      await underTest.cleanup();
    });

    it('starts empty', async () => {
      expect(await store.lastSeq()).toBe(0);
      expect(await store.read()).toEqual([]);
    });

    it('returns the appended event with its envelope but no seq, which read then shows', async () => {
      const before = Date.now();
      const event = store.append(toolStartedInput(subject, 1));
      const after = Date.now();
      expect(event).toMatchObject({ v: EVENT_VERSION, runId: 'run-1', agentId: 'agent-a', type: 'tool.started' });
      // A store shared by several processes knows an event's place only once it is written.
      expect(event).not.toHaveProperty('seq');
      expect(event.data).toEqual(toolStartedInput(subject, 1).data);
      expect(event.id).toMatch(/^[0-9a-z]{22}$/);
      expect(event.ts).toBeGreaterThanOrEqual(before);
      expect(event.ts).toBeLessThanOrEqual(after);
      expect(await store.read()).toEqual([{ ...event, seq: 1 }]);
      expect(await store.lastSeq()).toBe(1);
    });

    it('gives strictly increasing seq and unique ids across append and appendMany', async () => {
      const events: RecordedEvent[] = [];
      for (let step = 0; step < 300; step += 1) events.push(store.append(toolStartedInput(subject, step)));
      events.push(...store.appendMany(mixedInputs()));
      events.push(store.append(toolStartedInput(subject, 300)));
      const read = await store.read();
      expect(read.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
      expect(await store.lastSeq()).toBe(events.length);
      expect(read.map((event) => event.id)).toEqual(events.map((event) => event.id));
    });

    it('keeps ts non-decreasing when the requested time goes back', async () => {
      const first = store.append(toolStartedInput({ ...subject, ts: 5_000 }, 1));
      const earlier = store.append(toolStartedInput({ ...subject, ts: 4_000 }, 2));
      const later = store.append(toolStartedInput({ ...subject, ts: 6_000 }, 3));
      const unstamped = store.append(toolStartedInput(subject, 4));
      expect([first.ts, earlier.ts, later.ts]).toEqual([5_000, 5_000, 6_000]);
      expect(unstamped.ts).toBeGreaterThanOrEqual(6_000);
      expect((await store.read()).map((event) => event.ts)).toEqual([5_000, 5_000, 6_000, unstamped.ts]);
    });

    it('reads back buffered events without a flush', async () => {
      const appended = store.append(toolEndedInput(subject, 1, 'hello'));
      expect(await readRecorded(store)).toEqual([appended]);
    });

    it('filters by each field, by combinations, and limits', async () => {
      const appended = store.appendMany(mixedInputs());
      const events = await store.read();
      expect(events.map(withoutSeq)).toEqual(appended);
      const queries: EventQuery[] = [
        {},
        { runId: 'run-2' },
        { agentId: 'agent-b' },
        { agentId: 'system' },
        { types: ['tool.ended'] },
        { types: ['model.responded', 'run.ended'] },
        { types: [] },
        { since: 1_500 },
        { until: 1_200 },
        { since: 1_300, until: 1_315 },
        { afterSeq: 50 },
        { limit: 4 },
        { limit: 0 },
        { runId: 'run-1', types: ['tool.started'], limit: 5 },
        { runId: 'run-1', agentId: 'agent-a', since: 1_400, until: 1_800 },
        { agentId: 'agent-c', types: ['tool.ended', 'tool.started'], afterSeq: 30, until: 1_700 },
        { runId: 'run-3' },
      ];
      for (const query of queries) {
        expect(await store.read(query), JSON.stringify(query)).toEqual(filterLikeAStore(events, query));
      }
      expect(await store.read({ runId: 'run-2' })).toHaveLength(30);
      expect((await store.read({ since: 1_300, until: 1_315 })).map((event) => event.ts)).toEqual([
        1_300, 1_300, 1_305, 1_310, 1_310, 1_315,
      ]);
    });

    it('reads incrementally with afterSeq and a limit, in seq order', async () => {
      store.appendMany(mixedInputs());
      const collected: ColonyEvent[] = [];
      let afterSeq = 0;
      for (;;) {
        const page = await store.read({ afterSeq, limit: 7, runId: 'run-1' });
        if (page.length === 0) break;
        collected.push(...page);
        afterSeq = page[page.length - 1]?.seq ?? afterSeq;
      }
      expect(collected).toEqual(await store.read({ runId: 'run-1' }));
      const seqs = collected.map((event) => event.seq);
      expect(seqs).toEqual([...seqs].sort((left, right) => left - right));
      store.append(toolStartedInput(subject, 99));
      expect((await store.read({ afterSeq })).map((event) => event.data)).toEqual([toolStartedInput(subject, 99).data]);
    });

    it('throws on invalid input and stores nothing', async () => {
      const invalid: unknown[] = [
        { ...subject, type: 'tool.exploded', data: {} },
        { ...subject, type: 'tool.started', data: { step: 1, callId: 'c', name: 'read_file' } },
        { ...subject, type: 'tool.ended', data: { ...toolEndedInput(subject, 1, 'x').data, ok: 'yes' } },
        { ...subject, type: 'handoff.submitted', data: { taskId: 't', handoff: { status: 'done', summary: '' } } },
        { ...toolStartedInput(subject, 1), runId: '' },
        { ...toolStartedInput(subject, 1), agentId: 42 },
        { ...toolStartedInput(subject, 1), ts: 1.5 },
        { ...toolStartedInput(subject, 1), ts: -1 },
      ];
      for (const input of invalid) {
        expect(() => store.append(input as EventInput), JSON.stringify(input)).toThrow(TypeError);
      }
      expect(() => store.appendMany([toolStartedInput(subject, 1), invalid[0] as EventInput])).toThrow(/tool\.exploded/);
      expect(await store.lastSeq()).toBe(0);
      expect(await store.read()).toEqual([]);
      await store.flush();
      expect(await store.read()).toEqual([]);
      const valid = store.append(toolStartedInput(subject, 2));
      expect(await store.read()).toEqual([{ ...valid, seq: 1 }]);
    });

    it('appends many in order, and nothing for an empty list', async () => {
      expect(store.appendMany([])).toEqual([]);
      await store.flush();
      expect(await store.lastSeq()).toBe(0);
      const inputs = mixedInputs();
      const events = store.appendMany(inputs);
      expect(events.map((event) => [event.type, event.agentId, event.data])).toEqual(
        inputs.map((input) => [input.type, input.agentId, input.data]),
      );
      expect(await readRecorded(store)).toEqual(events);
    });

    it('round-trips payloads exactly: nested handoffs, unicode, large strings', async () => {
      const unicode = 'naïve café — 日本語 — 🐜🐜 — \u0000 NUL — "quotes" \\ backslash — \ud800 lone surrogate — \u2028';
      const large = 'x'.repeat(2_000_000) + unicode;
      const inputs: EventInput[] = [
        handoffSubmittedInput(subject, 'task-7'),
        toolEndedInput(subject, 2, unicode),
        toolEndedInput(subject, 3, large),
        modelRespondedInput(subject, 4, `${unicode}\n`.repeat(100)),
        { ...subject, type: 'agent.failed', data: { steps: 3, reason: 'died', lastToolCall: null } },
      ];
      const appended = inputs.map((input) => store.append(input));
      expect(appended.map((event) => event.data)).toEqual(inputs.map((input) => input.data));
      await store.flush();
      const read = await readRecorded(store);
      expect(read).toEqual(appended);
      expect(read[2]?.type === 'tool.ended' && read[2].data.output).toBe(large);
    });

    it('fills handoff defaults and returns the same event that read returns', async () => {
      const event = store.append({
        ...subject,
        type: 'handoff.submitted',
        data: { taskId: 'task-1', handoff: { status: 'failed', summary: 'crashed' } },
      } as EventInput);
      expect(event.type === 'handoff.submitted' && event.data.handoff).toMatchObject({ commits: [], synthetic: false });
      expect(await readRecorded(store)).toEqual([event]);
    });

    it('cannot be changed through the objects it hands out', async () => {
      const input = toolEndedInput(subject, 1, 'original');
      const appended = store.append(input);
      if (appended.type === 'tool.ended') (appended.data as { output: string }).output = 'changed';
      if (input.type === 'tool.ended') (input.data as { output: string }).output = 'changed too';
      const [first] = await store.read();
      if (first?.type === 'tool.ended') (first.data as { output: string }).output = 'changed again';
      const [again] = await store.read();
      expect(again?.type === 'tool.ended' && again.data.output).toBe('original');
    });

    it('refuses use after close', async () => {
      store.append(toolStartedInput(subject, 1));
      await store.close();
      expect(() => store.append(toolStartedInput(subject, 2))).toThrow(/closed/);
      await expect(store.read()).rejects.toThrow(/closed/);
      await expect(store.flush()).rejects.toThrow(/closed/);
      await expect(store.lastSeq()).rejects.toThrow(/closed/);
    });

    it('makes flushed events visible to another connection, and keeps them across reopening', async (context) => {
      const { reopen } = underTest;
      if (reopen === undefined) {
        context.skip();
        return;
      }
      const appended = store.appendMany(mixedInputs());
      await store.flush();
      const second = await reopen();
      expect(await readRecorded(second)).toEqual(appended);
      expect(await second.lastSeq()).toBe(appended.length);
      await second.close();
      await store.close();
      const reopened = await reopen();
      expect(await readRecorded(reopened)).toEqual(appended);
      const next = reopened.append(toolStartedInput({ ...subject, ts: 1 }, 1));
      expect(next.ts).toBe(3_000);
      expect(await reopened.read({ afterSeq: appended.length })).toEqual([{ ...next, seq: appended.length + 1 }]);
      await reopened.close();
    });
  });
}
