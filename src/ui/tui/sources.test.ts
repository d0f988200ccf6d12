import { describe, expect, it } from 'vitest';
import { followRun } from '../../observe/replay/run-reader.js';
import { openScriptedRun } from '../../observe/testing/scripted-run.js';
import { liveSource } from './sources.js';

/** A log longer than one read: a worker of 700 steps, four events each. */
function longLog() {
  const { store, run, clock } = openScriptedRun();
  run.startAgent('worker-1', 'worker', 'task-1', 'Write the lexer', { agentId: 'planner-root', taskId: 'task-root' });
  for (let step = 1; step <= 700; step += 1) run.step('worker-1', step, 'read_file', { path: `src/file-${step}.ts` }, 'export {}');
  let reads = 0;
  const failing = { next: false };
  const reader = {
    read: (query: Parameters<typeof store.read>[0]) => {
      reads += 1;
      if (failing.next) throw new Error('database is locked');
      return store.read(query);
    },
  };
  return { store, run, failing, source: liveSource(followRun(reader), () => Promise.resolve(''), () => clock.now), reads: () => reads };
}

describe('a live source on a long log', () => {
  it('reads a part in a frame and the rest between frames, then shows it all in the next frame', async () => {
    const { store, source, reads } = longLog();
    await source.tick();
    const first = source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps ?? 0;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(700);
    expect(source.describe()).toMatch(/^reading the log… [\d,]+ events$/);
    // A frame while the log is behind leaves the reading to the reads between frames.
    const afterFirst = reads();
    await source.tick();
    expect(reads()).toBe(afterFirst);
    let parts = 0;
    while (await source.readMore()) parts += 1;
    expect(parts).toBeGreaterThan(0);
    // What was read between frames shows in the next frame, not before.
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(first);
    await source.tick();
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(700);
    expect(source.view()?.lastSeq).toBe(await store.lastSeq());
    expect(source.describe()).toBe('live');
  });

  it('leaves the log to the next frame when a read between frames fails, and that frame says why', async () => {
    const { store, source, failing } = longLog();
    await source.tick();
    failing.next = true;
    await expect(source.readMore()).rejects.toThrow('database is locked');
    await expect(source.tick()).rejects.toThrow('database is locked');
    failing.next = false;
    await source.tick();
    while (await source.readMore());
    await source.tick();
    expect(source.view()?.lastSeq).toBe(await store.lastSeq());
  });

  it('reads nothing between frames once caught up: what the log gains is the next frame\'s', async () => {
    const { run, source, reads } = longLog();
    await source.tick();
    while (await source.readMore());
    await source.tick();
    const before = reads();
    expect(await source.readMore()).toBe(false);
    expect(reads()).toBe(before);
    run.step('worker-1', 701, 'read_file', { path: 'src/last.ts' }, 'export {}');
    await source.tick();
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(701);
  });
});
