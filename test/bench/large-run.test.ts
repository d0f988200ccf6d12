import { describe, expect, it } from 'vitest';
import { createLargeRun, type LargeRunShape } from '../../benchmarks/large-run.js';
import { writeLargeRun } from '../../benchmarks/large-run-log.js';
import { buildAgentTranscript } from '../../src/observe/replay/agent-transcript.js';
import { createRunViewFold } from '../../src/observe/view/run-view.js';
import { SCRIPT_T0 } from '../../src/observe/testing/scripted-run.js';
import type { EventInput } from '../../src/store/events/event-store.js';
import { createMemoryEventStore } from '../../src/store/events/memory-event-store.js';

const SHAPE: LargeRunShape = { events: 30_000, agents: 60, subPlanners: 4, workersAtOnce: 24, stillRunning: 20, seed: 7 };
const WRITING = { events: SHAPE.events, startTs: SCRIPT_T0, gapMs: 8, seed: 8 };

describe('the large run the terminal UI benchmark reads', () => {
  it('logs the tree it is shaped as: every agent started, the last workers inside a tool call', async () => {
    const store = createMemoryEventStore();
    const run = createLargeRun(SHAPE);
    const written = await writeLargeRun(store, run, WRITING);
    expect(written.events).toBe(await store.lastSeq());
    expect(written.events).toBeGreaterThanOrEqual(SHAPE.events);

    const fold = createRunViewFold();
    for (const event of await store.read()) fold.add(event);
    const view = fold.snapshot(written.lastTs);
    if (view === null) throw new Error('the log holds no run');
    expect(view.agents.map((agent) => agent.role).sort()).toEqual(['root-planner', ...Array(4).fill('sub-planner'), ...Array(55).fill('worker')].sort());
    const running = view.agents.filter((agent) => agent.role === 'worker' && agent.endedAt === null);
    expect(running.length).toBeGreaterThanOrEqual(SHAPE.stillRunning);
    expect(running.filter((agent) => agent.activity?.kind !== 'tool')).toEqual([]);
    expect(view.status.commits.landed).toBeGreaterThan(0);
    expect(view.status.handoffs.delivered).toBe(view.agents.filter((agent) => agent.role !== 'root-planner' && agent.endedAt !== null).length);

    // A page worth opening: the running worker whose log comes closest to a size asked for.
    const logged = new Map<string, number>();
    for (const agent of running) logged.set(agent.id, (await store.read({ agentId: agent.id })).length);
    const near = run.runningWorkerNear(300);
    if (near === null) throw new Error('no running worker');
    expect(running.map((agent) => agent.id)).toContain(near);
    const nearLogged = logged.get(near) ?? 0;
    expect(Math.min(...[...logged.values()].map((count) => Math.abs(count - 300)))).toBe(Math.abs(nearLogged - 300));
    expect(run.eventsOf(near)).toBe(nearLogged);
    const page = buildAgentTranscript(near, await store.read({ agentId: near }));
    expect(page.entries.at(-1)).toMatchObject({ kind: 'tool', ok: null });
  });

  it('writes tool outputs of a few hundred bytes, some of a few KB', async () => {
    const store = createMemoryEventStore();
    await writeLargeRun(store, createLargeRun(SHAPE), WRITING);
    const sizes = (await store.read({ types: ['tool.ended'] }))
      .map((event) => (event.type === 'tool.ended' ? event.data.output.length : 0))
      .sort((left, right) => left - right);
    const median = sizes[Math.floor(sizes.length / 2)] ?? 0;
    expect(median).toBeGreaterThan(100);
    expect(median).toBeLessThan(1_500);
    expect(sizes.filter((size) => size > 2_000).length).toBeGreaterThan(sizes.length / 20);
  });

  it('is the same run every time for the same shape', async () => {
    const inputs = async () => {
      const all: EventInput[] = [];
      await writeLargeRun({ appendMany: (batch) => all.push(...batch), flush: () => Promise.resolve() }, createLargeRun({ ...SHAPE, events: 5_000 }), { ...WRITING, events: 5_000 });
      return all;
    };
    expect(await inputs()).toEqual(await inputs());
  });
});
