import { expect, it } from 'vitest';
import { BOTH, RUN_ID, childTask, claimAll, claimRequest as request, handoffOf, lease, rootTask, seededRandom } from './task-store-fixtures.js';
import type { TaskKind, TaskStore } from '../tasks/task-store.js';

const ROOT = rootTask().id;

/**
 * The part of the TaskStore suite about the tree below a task: its open children and planners'
 * andons, which pause claims below a task. Called inside `describeTaskStoreConformance`, on its
 * store (made anew for each test, holding the root task) and its tree of tasks.
 */
export function describeTaskStoreAndons(storeOf: () => TaskStore, buildTree: () => Promise<void>): void {
  it('counts the children of a task that are still open or running', async () => {
    const store = storeOf();
    await buildTree();
    await store.createTask(childTask('worker-4', 'planner-p'), 160);
    expect(await store.openChildren('planner-p')).toBe(3);
    await store.claim(request('runner-a', 1_000)); // worker-1
    expect(await store.openChildren('planner-p')).toBe(3);
    await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'One.'), 1_100);
    expect(await store.openChildren('planner-p')).toBe(2);
    expect(await store.openChildren(ROOT)).toBe(2);
    expect(await store.openChildren('worker-2')).toBe(0);
    expect(await store.openChildren('no-such-task')).toBe(0);
  });

  it('counts as movable only the children that are running or can be claimed', async () => {
    const store = storeOf();
    await buildTree();
    await store.createTask(childTask('worker-4', 'planner-p'), 160);
    expect(await store.movableChildren('planner-p')).toBe(3);
    await store.claim(request('runner-a', 1_000)); // worker-1 runs
    await store.setAndon('planner-p', true, 1_010);
    // worker-1 still runs and will hand off; the two open ones wait for the andon.
    expect(await store.openChildren('planner-p')).toBe(3);
    expect(await store.movableChildren('planner-p')).toBe(1);
    await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'One.'), 1_100);
    expect(await store.movableChildren('planner-p')).toBe(0);
    await store.setAndon('planner-p', false, 1_200);
    expect(await store.movableChildren('planner-p')).toBe(2);
    expect(await store.movableChildren('no-such-task')).toBe(0);
  });

  it('pauses claims below a paused task, not of the task itself, and resumes them', async () => {
    const store = storeOf();
    await buildTree();
    await store.setAndon('planner-p', true, 1_000);
    expect(await store.pausedTasks(RUN_ID)).toEqual(['planner-p']);
    expect(await claimAll(store, request('runner-a', 1_000, BOTH))).toEqual([ROOT, 'planner-p', 'worker-3']);
    await store.setAndon('planner-p', false, 1_100);
    expect(await store.pausedTasks(RUN_ID)).toEqual([]);
    expect(await claimAll(store, request('runner-a', 1_100, BOTH))).toEqual(['worker-1', 'planner-q', 'worker-2']);
  });

  it('lets tasks already running below an andon renew and complete, but not be re-claimed', async () => {
    const store = storeOf();
    await buildTree();
    await store.claim(request('runner-a', 1_000, ['worker'], 100)); // worker-1
    await store.claim(request('runner-a', 1_000, ['worker'], 100)); // worker-2
    await store.setAndon('planner-p', true, 1_050);
    expect(await store.renewLeases('runner-a', 1_050, 100)).toBe(2);
    expect((await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'One.'), 1_060)).ok).toBe(true);
    // worker-2's lease expires under the andon: it waits for the resume.
    expect((await store.claim(request('runner-b', 5_000)))?.id).toBe('worker-3');
    expect(await store.claim(request('runner-b', 5_000))).toBeNull();
    await store.setAndon('planner-p', false, 5_100);
    expect(await store.claim(request('runner-b', 5_100))).toMatchObject({ id: 'worker-2', attempt: 2 });
  });

  it('keeps nested andons apart, and counts each switch once', async () => {
    const store = storeOf();
    await buildTree();
    await store.setAndon(ROOT, true, 1_000);
    await store.setAndon('planner-q', true, 1_000);
    await store.setAndon('planner-q', true, 1_001);
    await store.createTask(childTask('worker-4', 'planner-q'), 1_002);
    expect(await store.pausedTasks(RUN_ID)).toEqual([ROOT, 'planner-q']);
    expect(await claimAll(store, request('runner-a', 1_100, BOTH))).toEqual([ROOT]);
    await store.setAndon(ROOT, false, 1_200);
    const resumed = await claimAll(store, request('runner-a', 1_200, BOTH));
    expect(resumed).toEqual(['planner-p', 'worker-1', 'planner-q', 'worker-3']);
    await store.setAndon('planner-q', false, 1_300);
    expect(await claimAll(store, request('runner-a', 1_300, BOTH))).toEqual(['worker-2', 'worker-4']);
    await expect(store.setAndon('no-such-task', true, 1_400)).rejects.toThrow(/no-such-task/);
  });

  it('lists the paused tasks of one run, oldest first', async () => {
    const store = storeOf();
    await buildTree();
    await store.createTask(rootTask('run-2'), 100);
    await store.setAndon('planner-q', true, 1_000);
    await store.setAndon('root-of-run-2', true, 1_000);
    await store.setAndon('planner-p', true, 1_000);
    expect(await store.pausedTasks(RUN_ID)).toEqual(['planner-p', 'planner-q']);
    expect(await store.pausedTasks('run-2')).toEqual(['root-of-run-2']);
    expect(await claimAll(store, request('runner-a', 1_000, ['worker']))).toEqual(['worker-3']);
    expect(await store.pausedTasks('run-unknown')).toEqual([]);
  });

  it('claims what a walk up the tree allows, through any sequence of andons and new tasks', async () => {
    const store = storeOf();
    const random = seededRandom(20_261_129);
    const parents = new Map<string, string | null>([[ROOT, null]]);
    const planners = [ROOT];
    const paused = new Set<string>();
    const isBelowAndon = (id: string): boolean => {
      for (let parent = parents.get(id) ?? null; parent !== null; parent = parents.get(parent) ?? null) {
        if (paused.has(parent)) return true;
      }
      return false;
    };
    const pick = <Item>(items: readonly Item[]): Item => items[Math.floor(random() * items.length)] as Item;
    let now = 1_000;
    for (let round = 0; round < 30; round += 1) {
      for (let index = 0; index < 3; index += 1) {
        const id = `task-${round}-${index}`;
        const kind: TaskKind = random() < 0.4 ? 'planner' : 'worker';
        const parent = pick(planners);
        await store.createTask(childTask(id, parent, kind), now);
        parents.set(id, parent);
        if (kind === 'planner') planners.push(id);
      }
      const switched = pick(planners);
      const pause = random() < 0.6;
      await store.setAndon(switched, pause, now);
      if (pause) paused.add(switched);
      else paused.delete(switched);
      const expected = [...parents.keys()].filter((id) => !isBelowAndon(id));
      now += 1;
      const claimed = await claimAll(store, request('runner-a', now, BOTH));
      expect(claimed, `round ${round}`).toEqual(expected);
      for (const id of claimed) await store.release(id, lease('runner-a', (await store.getTask(id))?.attempt ?? 0));
      expect((await store.pausedTasks(RUN_ID)).sort()).toEqual([...paused].sort());
    }
  });
}
