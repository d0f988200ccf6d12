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
  it('reads a part in a frame and the rest between frames, then shows it all in the next frame', () => {
    const { store, source, reads } = longLog();
    source.tick();
    const first = source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps ?? 0;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(700);
    expect(source.describe()).toMatch(/^reading the log… [\d,]+ events$/);
    // A frame while the log is behind leaves the reading to the reads between frames.
    const afterFirst = reads();
    source.tick();
    expect(reads()).toBe(afterFirst);
    let parts = 0;
    while (source.readMore()) parts += 1;
    expect(parts).toBeGreaterThan(0);
    // What was read between frames shows in the next frame, not before.
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(first);
    source.tick();
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(700);
    expect(source.view()?.lastSeq).toBe(store.lastSeq());
    expect(source.describe()).toBe('live');
  });

  it('leaves the log to the next frame when a read between frames fails, and that frame says why', () => {
    const { store, source, failing } = longLog();
    source.tick();
    failing.next = true;
    expect(() => source.readMore()).toThrow('database is locked');
    expect(() => source.tick()).toThrow('database is locked');
    failing.next = false;
    source.tick();
    while (source.readMore());
    source.tick();
    expect(source.view()?.lastSeq).toBe(store.lastSeq());
  });

  it('reads nothing between frames once caught up: what the log gains is the next frame\'s', () => {
    const { run, source, reads } = longLog();
    source.tick();
    while (source.readMore());
    source.tick();
    const before = reads();
    expect(source.readMore()).toBe(false);
    expect(reads()).toBe(before);
    run.step('worker-1', 701, 'read_file', { path: 'src/last.ts' }, 'export {}');
    source.tick();
    expect(source.view()?.agents.find((agent) => agent.id === 'worker-1')?.steps).toBe(701);
  });
});
