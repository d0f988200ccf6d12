import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RUN_ID, childTask, createdTask, handoffOf, rootTask } from './task-store-fixtures.js';
import type { OpenTaskStoreUnderTest, TaskStoreUnderTest } from './task-store-fixtures.js';
import type { ClaimRequest, Lease, TaskKind, TaskRecord, TaskStore } from '../tasks/task-store.js';

const ROOT = rootTask().id;

function request(holder: string, now: number, kinds: readonly TaskKind[], leaseMs = 100): ClaimRequest {
  return { runId: RUN_ID, holder, kinds, now, leaseMs };
}

function leaseOf(task: TaskRecord | null): Lease {
  if (task === null || task.leaseHolder === null) throw new Error('expected a claimed task');
  return { holder: task.leaseHolder, attempt: task.attempt };
}

/**
 * The part of the TaskStore suite about attempts and resuming: every write made on a task's
 * behalf carries its lease, and a lease from before the latest claim changes nothing. Run by
 * `describeTaskStoreConformance`, so every implementation passes it.
 */
export function describeTaskStoreFencing(open: OpenTaskStoreUnderTest): void {
  describe('generations and resume', () => {
    let underTest: TaskStoreUnderTest;
    let store: TaskStore;

    beforeEach(async () => {
      underTest = await open();
      store = underTest.store;
      await store.createTask(rootTask(), 100);
    });

    afterEach(async () => {
      await underTest.cleanup();
    });

    /** Claims `id` (the only claimable task of its kind) as `holder`; the lease expires at now + 100. */
    async function claimAs(id: string, holder: string, now: number, kind: TaskKind = 'worker'): Promise<Lease> {
      const task = await store.claim(request(holder, now, [kind]));
      expect(task?.id).toBe(id);
      return leaseOf(task);
    }

    it.each([
      ['another holder', 'runner-b'],
      ['the same holder', 'runner-a'],
    ])('a message from an older incarnation is ignored (the task re-claimed by %s)', async (_, successor) => {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.claim(request('runner-root', 1_000, ['planner'], 60_000));
      const older = await claimAs('planner-p', 'runner-a', 1_000, 'planner');
      // The agent of attempt 1 stalls past its lease; the planner is claimed again as attempt 2.
      const newer = await claimAs('planner-p', successor, 1_101, 'planner');
      expect(newer).toEqual({ holder: successor, attempt: 2 });
      await store.sendMessage(RUN_ID, 'planner-p', 'For whoever plans p now.', 1_150);
      const before = await store.listTasks(RUN_ID);

      const publish = await store.createTask(childTask('worker-late', 'planner-p'), 1_200, older);
      expect(publish.ok).toBe(false);
      expect(!publish.ok && publish.error).toMatch(/planner-p.*attempt 2.*attempt 1.*ignored/);
      expect(await store.takeInbox('planner-p', older)).toEqual([]);
      expect(await store.setAndon('planner-p', true, 1_200, older)).toBe(false);
      const handoff = await store.complete('planner-p', older, handoffOf('done', 'Stale.'), 1_200);
      expect(!handoff.ok && handoff.error).toMatch(/attempt 2.*attempt 1/);
      expect(await store.release('planner-p', older)).toBe(false);

      expect(await store.listTasks(RUN_ID)).toEqual(before);
      expect(await store.unreadCount('planner-p')).toBe(1);
      expect(await store.pausedTasks(RUN_ID)).toEqual([]);
      expect(await store.deliveredHandoffs(RUN_ID)).toEqual([]);

      expect(await store.createTask(childTask('worker-1', 'planner-p'), 1_300, newer)).toMatchObject({ ok: true, task: { id: 'worker-1' } });
      expect((await store.takeInbox('planner-p', newer)).map((message) => message.text)).toEqual(['For whoever plans p now.']);
      expect(await store.setAndon('planner-p', true, 1_300, newer)).toBe(true);
      expect((await store.complete('planner-p', newer, handoffOf('done', 'Planned.'), 1_400)).ok).toBe(true);
    });

    it('refuses a handoff from the same holder once it has re-claimed the task at a higher attempt', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      const first = await claimAs('worker-1', 'runner-a', 1_000);
      const second = await claimAs('worker-1', 'runner-a', 1_101);
      expect(second).toEqual({ holder: 'runner-a', attempt: 2 });
      const stale = await store.complete('worker-1', first, handoffOf('done', 'From attempt 1.'), 1_150);
      expect(stale.ok).toBe(false);
      expect(!stale.ok && stale.error).toMatch(/worker-1 is run by attempt 2 \(held by runner-a\).*attempt 1 \(held by runner-a\)/);
      expect(await store.release('worker-1', first)).toBe(false);
      expect(await store.getTask('worker-1')).toMatchObject({ status: 'running', leaseHolder: 'runner-a', attempt: 2 });
      expect(await store.complete('worker-1', second, handoffOf('done', 'From attempt 2.'), 1_160)).toMatchObject({
        ok: true,
        task: { status: 'done', attempt: 2, handoff: { summary: 'From attempt 2.' } },
      });
    });

    it('fences release: only the current generation gives a task back', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      const first = await claimAs('worker-1', 'runner-a', 1_000);
      const second = await claimAs('worker-1', 'runner-b', 1_101);
      expect(await store.release('worker-1', first)).toBe(false);
      expect(await store.release('worker-1', { holder: 'runner-b', attempt: 1 })).toBe(false);
      expect(await store.getTask('worker-1')).toMatchObject({ status: 'running', leaseHolder: 'runner-b', attempt: 2 });
      expect(await store.release('worker-1', second)).toBe(true);
      expect(await store.getTask('worker-1')).toMatchObject({ status: 'open', leaseHolder: null, attempt: 2 });
      expect(await store.release('worker-1', second)).toBe(false);
    });

    it('publishes under a planner only from the generation running it', async () => {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.claim(request('runner-root', 1_000, ['planner'], 60_000));
      const first = await claimAs('planner-p', 'runner-a', 1_000, 'planner');
      expect(createdTask(await store.createTask(childTask('worker-1', 'planner-p'), 1_050, first)).createdBy).toBe('agent-of-planner-p');
      const second = await claimAs('planner-p', 'runner-a', 1_101, 'planner');
      const stale = await store.createTask(childTask('worker-2', 'planner-p'), 1_150, first);
      expect(stale).toEqual({
        ok: false,
        error: expect.stringMatching(/^The planner of task planner-p is run by attempt 2.*worker-2 came from attempt 1.*ignored/),
      });
      expect(await store.getTask('worker-2')).toBeNull();
      expect((await store.createTask(childTask('worker-2', 'planner-p'), 1_160, second)).ok).toBe(true);
      expect(await store.release('planner-p', second)).toBe(true);
      const open = await store.createTask(childTask('worker-3', 'planner-p'), 1_170, second);
      expect(!open.ok && open.error).toMatch(/planner-p is open.*attempt 2/);
      const third = await claimAs('planner-p', 'runner-b', 1_180, 'planner');
      await store.complete('planner-p', third, handoffOf('done', 'Planned.'), 1_190);
      const closed = await store.createTask(childTask('worker-3', 'planner-p'), 1_200, third);
      expect(!closed.ok && closed.error).toMatch(/planner-p is already closed \(done\).*attempt 3/);
      expect((await store.listChildren('planner-p')).map((task) => task.id)).toEqual(['worker-1', 'worker-2']);
    });

    it('still throws for a programmer error, whatever the publisher', async () => {
      const planner = await claimAs(ROOT, 'runner-a', 1_000, 'planner');
      await expect(store.createTask(childTask(ROOT, ROOT), 1_010, planner)).rejects.toThrow(ROOT);
      await expect(store.createTask(childTask('orphan', 'no-such-task'), 1_010, planner)).rejects.toThrow(/no-such-task/);
      await expect(store.createTask(rootTask('run-2'), 1_010, planner)).rejects.toThrow(/root-of-run-2/);
      expect((await store.listTasks(RUN_ID)).map((task) => task.id)).toEqual([ROOT]);
      expect(await store.listTasks('run-2')).toEqual([]);
    });

    it('hands an inbox only to the generation running its planner, taking nothing otherwise', async () => {
      const first = await claimAs(ROOT, 'runner-a', 1_000, 'planner');
      await store.sendMessage(RUN_ID, ROOT, 'One.', 1_010);
      expect((await store.takeInbox(ROOT, first)).map((message) => message.text)).toEqual(['One.']);
      await store.sendMessage(RUN_ID, ROOT, 'Two.', 1_020);
      const second = await claimAs(ROOT, 'runner-b', 1_101, 'planner');
      expect(await store.takeInbox(ROOT, first)).toEqual([]);
      expect(await store.takeInbox(ROOT, { holder: 'runner-b', attempt: 3 })).toEqual([]);
      expect(await store.takeInbox('no-such-task', second)).toEqual([]);
      expect(await store.unreadCount(ROOT)).toBe(1);
      expect((await store.takeInbox(ROOT, second)).map((message) => message.text)).toEqual(['Two.']);
      await store.sendMessage(RUN_ID, ROOT, 'Three.', 1_200);
      // Without a lease the inbox is taken as before: a person's tool, or a store without fencing callers.
      expect((await store.takeInbox(ROOT)).map((message) => message.text)).toEqual(['Three.']);
    });

    it('switches an andon only for the generation running the task', async () => {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.createTask(childTask('worker-1', 'planner-p'), 120);
      await store.claim(request('runner-root', 1_000, ['planner'], 60_000));
      const first = await claimAs('planner-p', 'runner-a', 1_000, 'planner');
      expect(await store.setAndon('planner-p', true, 1_010, first)).toBe(true);
      expect(await store.pausedTasks(RUN_ID)).toEqual(['planner-p']);
      const second = await claimAs('planner-p', 'runner-b', 1_101, 'planner');
      expect(await store.setAndon('planner-p', false, 1_110, first)).toBe(false);
      expect(await store.pausedTasks(RUN_ID)).toEqual(['planner-p']);
      expect(await store.claim(request('runner-c', 1_120, ['worker']))).toBeNull();
      expect(await store.setAndon('planner-p', false, 1_130, second)).toBe(true);
      expect(await store.setAndon('planner-p', false, 1_140, second)).toBe(true);
      expect((await store.claim(request('runner-c', 1_150, ['worker'])))?.id).toBe('worker-1');
      expect(await store.setAndon('planner-p', true, 1_160)).toBe(true);
      await expect(store.setAndon('no-such-task', true, 1_170, second)).rejects.toThrow(/no-such-task/);
    });

    it('opens every running task of a run on resume, keeping attempts, so the next claim is a new generation', async () => {
      for (const id of ['worker-1', 'worker-2', 'worker-3', 'worker-4']) await store.createTask(childTask(id, ROOT), 200);
      await store.createTask(rootTask('run-2'), 100);
      await store.createTask({ ...childTask('worker-of-run-2', 'root-of-run-2'), runId: 'run-2' }, 100);
      const root = await claimAs(ROOT, 'runner-a', 1_000, 'planner');
      const one = await claimAs('worker-1', 'runner-a', 1_000);
      await claimAs('worker-2', 'runner-b', 1_000);
      await claimAs('worker-3', 'runner-a', 1_000);
      await store.complete('worker-3', leaseOf(await store.getTask('worker-3')), handoffOf('done', 'Three.'), 1_050);
      await store.claim({ ...request('runner-a', 1_000, ['worker']), runId: 'run-2' });

      const released = await store.releaseAbandoned(RUN_ID, 1_060);
      expect(released.map((task) => task.id)).toEqual([ROOT, 'worker-1', 'worker-2']);
      for (const task of released) {
        expect(task).toMatchObject({ status: 'open', leaseHolder: null, leaseExpiresAt: null, attempt: 1 });
        expect(await store.getTask(task.id)).toEqual(task);
      }
      expect((await store.getTask('worker-3'))?.status).toBe('done');
      expect(await store.getTask('worker-4')).toMatchObject({ status: 'open', attempt: 0 });
      expect(await store.getTask('worker-of-run-2')).toMatchObject({ status: 'running', leaseHolder: 'runner-a' });
      expect(await store.releaseAbandoned(RUN_ID, 1_070)).toEqual([]);

      expect((await store.complete('worker-1', one, handoffOf('done', 'From the dead runner.'), 1_080)).ok).toBe(false);
      expect(await store.takeInbox(ROOT, root)).toEqual([]);
      expect(await store.claim(request('runner-c', 1_090, ['worker'], 60_000))).toMatchObject({ id: 'worker-1', attempt: 2 });
      expect(await store.claim(request('runner-c', 1_090, ['planner'], 60_000))).toMatchObject({ id: ROOT, attempt: 2 });
    });

    it('lists the messages a recipient has taken, oldest first', async () => {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.createTask(childTask('worker-1', ROOT), 120);
      expect(await store.takenInbox(ROOT)).toEqual([]);
      const first = await store.sendMessage(RUN_ID, ROOT, 'First.', 1_000);
      const worker = await claimAs('worker-1', 'runner-a', 1_000);
      const completed = await store.complete('worker-1', worker, handoffOf('done', 'One.'), 1_010);
      await store.sendMessage(RUN_ID, 'planner-p', 'For p.', 1_020);
      expect(await store.takenInbox(ROOT)).toEqual([]);
      const taken = await store.takeInbox(ROOT);
      expect(taken).toEqual([first, completed.ok ? completed.delivered : null]);
      const later = await store.sendMessage(RUN_ID, ROOT, 'Later.', 1_030);
      expect(await store.takenInbox(ROOT)).toEqual(taken);
      await store.takeInbox(ROOT);
      expect(await store.takenInbox(ROOT)).toEqual([...taken, later]);
      expect(await store.takenInbox('planner-p')).toEqual([]);
      expect(await store.takenInbox('no-such-task')).toEqual([]);
    });

    it("lists a task's own children, oldest first", async () => {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.createTask(childTask('worker-b', 'planner-p'), 130);
      await store.createTask(childTask('worker-1', ROOT), 120);
      await store.createTask(childTask('worker-a', 'planner-p'), 100);
      await store.createTask(childTask('worker-c', 'worker-1'), 140);
      expect((await store.listChildren(ROOT)).map((task) => task.id)).toEqual(['planner-p', 'worker-1']);
      expect((await store.listChildren('planner-p')).map((task) => task.id)).toEqual(['worker-b', 'worker-a']);
      expect((await store.listChildren('planner-p'))[0]).toEqual(await store.getTask('worker-b'));
      expect(await store.listChildren('worker-c')).toEqual([]);
      expect(await store.listChildren('no-such-task')).toEqual([]);
    });
  });
}
