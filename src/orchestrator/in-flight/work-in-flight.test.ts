import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { createWorkInFlight } from './work-in-flight.js';

const RUN = 'run-1';

function created(taskId: string, parentTaskId: string | null, paths: string[], scope: string | null = null): EventBody {
  const kind = scope === null && parentTaskId !== null ? 'worker' : 'planner';
  return { type: 'task.created', data: { taskId, parentTaskId, kind, title: `Task ${taskId}`, scope, retryOf: null, paths } };
}

function append(store: EventStore, agentId: string, ...bodies: EventBody[]): void {
  for (const body of bodies) store.append({ ...body, runId: RUN, agentId });
}

/** root -> (planner geo with scope src/geo/ -> worker g1), worker a, worker b; a worker touched a file. */
function run(): EventStore {
  const store = createMemoryEventStore();
  append(
    store,
    'system',
    created('root', null, []),
    created('geo', 'root', [], 'src/geo/'),
    created('a', 'root', ['src/index.js', 'src/text/']),
    created('b', 'root', ['src/index.js', 'src/text/pad.js']),
    created('g1', 'geo', ['src/geo/shape.js']),
    created('c', 'root', ['docs/']),
  );
  append(
    store,
    'worker-a',
    { type: 'agent.started', data: { role: 'worker', taskId: 'a', title: 'a', model: 'sim', systemPrompt: 'p', task: 't', tools: [] } },
    { type: 'tool.started', data: { step: 1, callId: 'c1', name: 'write_file', input: '{"path":"src/util.js","content":""}' } },
    { type: 'tool.ended', data: { step: 1, callId: 'c1', name: 'write_file', ok: true, output: 'ok', durationMs: 1 } },
  );
  return store;
}

describe('work in flight', () => {
  it('pictures the worker tasks in flight, the paths they share and nothing of closed tasks', async () => {
    const store = run();
    const work = createWorkInFlight(store, RUN);
    const picture = await work.picture();
    expect(picture.inFlight.map((task) => task.taskId)).toEqual(['a', 'b', 'g1', 'c']);
    expect(picture.shared).toEqual([
      { path: 'src/index.js', taskIds: ['a', 'b'] },
      { path: 'src/text/pad.js', taskIds: ['a', 'b'] },
    ]);
    expect(picture.hot).toEqual([]);

    // Read afresh from the store: a handoff recorded since closes the task.
    append(store, 'system', { type: 'handoff.delivered', data: { taskId: 'b', parentTaskId: 'root', status: 'done' } });
    const after = await work.picture();
    expect(after.inFlight.map((task) => task.taskId)).toEqual(['a', 'g1', 'c']);
    expect(after.shared).toEqual([]);
  });

  it('finds the tasks a new task’s paths meet: the same file, a folder over it, a file under it, a delegated scope', async () => {
    const work = createWorkInFlight(run(), RUN);
    expect(await work.overlapsWith(['src/text/pad.js'], 'root')).toEqual([
      { taskId: 'a', title: 'Task a', kind: 'worker', state: 'open', declared: ['src/text/'], touched: [] },
      { taskId: 'b', title: 'Task b', kind: 'worker', state: 'open', declared: ['src/text/pad.js'], touched: [] },
    ]);
    expect((await work.overlapsWith(['src/'], 'root')).map((overlap) => [overlap.taskId, overlap.declared, overlap.touched])).toEqual([
      ['geo', ['src/geo/'], []],
      ['a', ['src/index.js', 'src/text/'], ['src/util.js']],
      ['b', ['src/index.js', 'src/text/pad.js'], []],
      ['g1', ['src/geo/shape.js'], []],
    ]);
    expect((await work.overlapsWith(['src/geo/circle.js'], 'root')).map((overlap) => overlap.taskId)).toEqual(['geo']);
    expect(await work.overlapsWith(['src/textile.js', 'README.md'], 'root')).toEqual([]);
  });

  it('leaves out the asking planner and its ancestors, whose scopes hold the new task', async () => {
    const work = createWorkInFlight(run(), RUN);
    expect((await work.overlapsWith(['src/geo/shape.js'], 'geo')).map((overlap) => overlap.taskId)).toEqual(['g1']);
    expect(await work.overlapsWith(['src/geo/circle.js'], 'geo')).toEqual([]);
  });
});
