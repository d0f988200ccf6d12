import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RUN_ID, childTask, createdTask, handoffOf, rootTask } from './task-store-fixtures.js';
import type { OpenTaskStoreUnderTest, TaskStoreUnderTest } from './task-store-fixtures.js';
import type { ClaimRequest, Lease, TaskKind, TaskStore } from '../tasks/task-store.js';

const ROOT = rootTask().id;
const BOTH: readonly TaskKind[] = ['worker', 'planner'];

function request(holder: string, now: number, runId = RUN_ID, kinds: readonly TaskKind[] = BOTH, leaseMs = 100): ClaimRequest {
  return { runId, holder, kinds, now, leaseMs };
}

/**
 * The part of the TaskStore suite about a person steering a run: the user's hold on the whole
 * run, kept apart from planners' andons, the messages people left, listed by run, and people's
 * requests (worker limits, stops). Run by
 * `describeTaskStoreConformance`, so every implementation passes it.
 */
export function describeTaskStoreSteering(open: OpenTaskStoreUnderTest): void {
  describe("the user's hold and people's messages", () => {
    let underTest: TaskStoreUnderTest;
    let store: TaskStore;

    beforeEach(async () => {
      underTest = await open();
      store = underTest.store;
      await store.createTask(rootTask(), 100);
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.createTask(childTask('worker-1', 'planner-p'), 120);
    });

    afterEach(async () => {
      await underTest.cleanup();
    });

    async function claimOne(id: string, holder: string, now: number, kinds: readonly TaskKind[] = BOTH): Promise<Lease> {
      const task = await store.claim(request(holder, now, RUN_ID, kinds));
      expect(task?.id).toBe(id);
      return { holder, attempt: task?.attempt ?? 0 };
    }

    it('claims no task of a held run, open or with an expired lease, until the user releases it; other runs go on', async () => {
      const worker = await claimOne('worker-1', 'runner-a', 1_000, ['worker']);
      expect(await store.setRunAndon(RUN_ID, true, 'reviewing main', 1_050)).toMatchObject({ runId: RUN_ID, paused: true, reason: 'reviewing main', changedAt: 1_050 });
      // worker-1's lease expired at 1,100; the root and planner-p are open: none is handed out.
      expect(await store.claim(request('runner-b', 5_000))).toBeNull();
      expect(await store.claim(request('runner-b', 5_000, RUN_ID, ['worker']))).toBeNull();
      // Another run is not held.
      await store.createTask(rootTask('run-2'), 1_060);
      expect((await store.claim(request('runner-b', 5_000, 'run-2')))?.id).toBe(rootTask('run-2').id);
      // What runs goes on: its holder renews and completes it.
      expect(await store.renewLeases('runner-a', 5_000, 100)).toBe(1);
      expect((await store.complete('worker-1', worker, handoffOf('done', 'Built.'), 5_010)).ok).toBe(true);
      expect(await store.setRunAndon(RUN_ID, false, 'main is fine', 6_000)).toMatchObject({ paused: false, reason: 'main is fine' });
      expect((await store.claim(request('runner-b', 6_100)))?.id).toBe(ROOT);
      expect((await store.claim(request('runner-b', 6_100)))?.id).toBe('planner-p');
    });

    it("claims only while the run's latest andon change is the one the claimer names, when it names one", async () => {
      expect(await store.claim({ ...request('runner-a', 1_000), runAndonSeq: 1 })).toBeNull();
      const held = await store.setRunAndon(RUN_ID, true, 'wait', 1_010);
      const released = await store.setRunAndon(RUN_ID, false, 'go', 1_020);
      // A claimer whose log has only the hold, or nothing, gets nothing until it records the release.
      expect(await store.claim({ ...request('runner-a', 1_100), runAndonSeq: held?.seq ?? -1 })).toBeNull();
      expect(await store.claim({ ...request('runner-a', 1_100), runAndonSeq: 0 })).toBeNull();
      expect((await store.claim({ ...request('runner-a', 1_100, RUN_ID, BOTH, 10_000), runAndonSeq: released?.seq ?? -1 }))?.id).toBe(ROOT);
      // Another run's changes are not this run's.
      await store.createTask(rootTask('run-2'), 1_200);
      expect((await store.claim({ ...request('runner-a', 1_300, 'run-2'), runAndonSeq: 0 }))?.id).toBe(rootTask('run-2').id);
      // Without a seq, only a hold stops it.
      expect((await store.claim(request('runner-a', 1_300)))?.id).toBe('planner-p');
    });

    it("is not lifted by a planner's andon, and does not show as one", async () => {
      await store.setRunAndon(RUN_ID, true, 'hold everything', 1_000);
      expect(await store.setAndon(ROOT, true, 1_100)).toBe(true);
      expect(await store.setAndon(ROOT, false, 1_200)).toBe(true);
      expect(await store.setAndon('planner-p', false, 1_300)).toBe(true);
      expect(await store.runAndon(RUN_ID)).toMatchObject({ paused: true, reason: 'hold everything' });
      expect(await store.pausedTasks(RUN_ID)).toEqual([]);
      expect(await store.claim(request('runner-a', 2_000))).toBeNull();
    });

    it('still counts open children as movable while the run is held: their planner waits for the user', async () => {
      const before = await store.movableChildren('planner-p');
      await store.setRunAndon(RUN_ID, true, 'wait', 1_000);
      expect(before).toBe(1);
      expect(await store.movableChildren('planner-p')).toBe(1);
      expect(await store.openChildren('planner-p')).toBe(1);
    });

    it('keeps each change once, in order, and makes no change that would change nothing', async () => {
      expect(await store.setRunAndon(RUN_ID, false, 'nothing to release', 1_000)).toBeNull();
      expect(await store.runAndon(RUN_ID)).toBeNull();
      const first = await store.setRunAndon(RUN_ID, true, 'first', 1_100);
      expect(await store.setRunAndon(RUN_ID, true, 'first', 1_200)).toBeNull();
      const second = await store.setRunAndon(RUN_ID, true, 'a better reason', 1_300);
      expect(await store.runAndon(RUN_ID)).toEqual(second);
      const released = await store.setRunAndon(RUN_ID, false, 'done looking', 1_400);
      expect(await store.setRunAndon(RUN_ID, false, 'again', 1_500)).toBeNull();
      expect(await store.runAndon(RUN_ID)).toBeNull();
      expect(first).not.toBeNull();
      const all = await store.runAndonChanges(RUN_ID, 0);
      expect(all).toEqual([first, second, released]);
      expect(all.map((change) => change.seq)).toEqual([...all.map((change) => change.seq)].sort((a, b) => a - b));
      expect(await store.runAndonChanges(RUN_ID, first?.seq ?? 0)).toEqual([second, released]);
      expect(await store.runAndonChanges('run-2', 0)).toEqual([]);
    });

    it("lists the messages people left in a run's inboxes after a seq, taken or not, and no handoff", async () => {
      await store.createTask(rootTask('run-2'), 130);
      const lease = await claimOne(ROOT, 'runner-a', 1_000, ['planner']);
      const toRoot = await store.sendMessage(RUN_ID, ROOT, 'Focus on the parser.', 1_100);
      await store.sendMessage('run-2', rootTask('run-2').id, 'Another run.', 1_150);
      const worker = await claimOne('worker-1', 'runner-a', 1_200, ['worker']);
      await store.complete('worker-1', worker, handoffOf('done', 'Built.'), 1_300);
      const toPlanner = await store.sendMessage(RUN_ID, 'planner-p', 'Skip the docs.', 1_400);
      await store.takeInbox(ROOT, lease);
      expect(await store.personMessages(RUN_ID, 0)).toEqual([toRoot, toPlanner]);
      expect(await store.personMessages(RUN_ID, toRoot.seq)).toEqual([toPlanner]);
      expect(await store.personMessages(RUN_ID, toPlanner.seq)).toEqual([]);
      expect(createdTask(await store.createTask(childTask('worker-2', ROOT), 1_500)).status).toBe('open');
    });

    it("tells colony's own messages from a person's: they reach the inbox in order and are not listed as a person's", async () => {
      const lease = await claimOne(ROOT, 'runner-a', 1_000, ['planner']);
      const person = await store.sendMessage(RUN_ID, ROOT, 'Focus on the parser.', 1_100);
      const notice = await store.sendMessage(RUN_ID, ROOT, 'Main is red: the check fails.', 1_200, 'colony');
      expect(person.sender).toBe('person');
      expect(notice).toMatchObject({ sender: 'colony', fromTaskId: null, handoff: null, text: 'Main is red: the check fails.' });
      expect(await store.personMessages(RUN_ID, 0)).toEqual([person]);
      expect((await store.takeInbox(ROOT, lease)).map((message) => [message.text, message.sender])).toEqual([
        ['Focus on the parser.', 'person'],
        ['Main is red: the check fails.', 'colony'],
      ]);
      const worker = await claimOne('worker-1', 'runner-a', 1_300, ['worker']);
      const completed = await store.complete('worker-1', worker, handoffOf('done', 'Built.'), 1_400);
      expect(completed.ok && completed.delivered?.sender).toBeNull();
    });

    it("keeps people's requests of a run (worker limits and stops) once each, in order, apart from other runs", async () => {
      await store.createTask(rootTask('run-2'), 130);
      expect(await store.runRequests(RUN_ID, 0)).toEqual([]);
      const fewer = await store.requestWorkers(RUN_ID, 2, 'the machine is busy', 1_000);
      const stop = await store.requestStop(RUN_ID, 'worker-1', 'it went the wrong way', 1_100);
      const elsewhere = await store.requestWorkers('run-2', 8, 'another run', 1_150);
      const more = await store.requestWorkers(RUN_ID, 6, 'the machine is free', 1_200);
      expect(fewer).toEqual({ seq: fewer.seq, runId: RUN_ID, kind: 'workers', workers: 2, reason: 'the machine is busy', requestedAt: 1_000 });
      expect(stop).toEqual({ seq: stop.seq, runId: RUN_ID, kind: 'stop', taskId: 'worker-1', reason: 'it went the wrong way', requestedAt: 1_100 });
      expect(await store.runRequests(RUN_ID, 0)).toEqual([fewer, stop, more]);
      expect([fewer.seq, stop.seq, elsewhere.seq, more.seq]).toEqual([fewer.seq, stop.seq, elsewhere.seq, more.seq].sort((a, b) => a - b));
      expect(await store.runRequests(RUN_ID, fewer.seq)).toEqual([stop, more]);
      expect(await store.runRequests(RUN_ID, more.seq)).toEqual([]);
      expect(await store.runRequests('run-2', 0)).toEqual([elsewhere]);
      const green = await store.requestGreen(RUN_ID, 'before the release', 1_300);
      expect(green).toEqual({ seq: green.seq, runId: RUN_ID, kind: 'green', reason: 'before the release', requestedAt: 1_300 });
      expect(await store.runRequests(RUN_ID, more.seq)).toEqual([green]);
      // A request changes no task by itself: the run acts on it.
      expect((await store.getTask('worker-1'))?.status).toBe('open');
      expect((await store.claim(request('runner-a', 2_000, RUN_ID, ['worker'])))?.id).toBe('worker-1');
    });

    it('refuses a worker limit that is not a positive whole number and a stop of a task outside the run, keeping nothing', async () => {
      await store.createTask(rootTask('run-2'), 130);
      for (const workers of [0, -1, 1.5, Number.NaN]) await expect(store.requestWorkers(RUN_ID, workers, 'bad', 1_000)).rejects.toThrow(/positive whole number/);
      await expect(store.requestStop(RUN_ID, 'no-such-task', 'bad', 1_000)).rejects.toThrow(/no-such-task/);
      await expect(store.requestStop('run-2', 'worker-1', 'bad', 1_000)).rejects.toThrow(/worker-1/);
      expect(await store.runRequests(RUN_ID, 0)).toEqual([]);
      expect(await store.runRequests('run-2', 0)).toEqual([]);
    });

    it('keeps the hold and the requests across reopening', async (context) => {
      const { reopen } = underTest;
      if (reopen === undefined) {
        context.skip();
        return;
      }
      const hold = await store.setRunAndon(RUN_ID, true, 'over the weekend', 1_000);
      const requests = [await store.requestWorkers(RUN_ID, 3, 'fewer', 1_010), await store.requestStop(RUN_ID, 'planner-p', 'wrong slice', 1_020)];
      await store.close();
      const reopened = await reopen();
      expect(await reopened.runAndon(RUN_ID)).toEqual(hold);
      expect(await reopened.runRequests(RUN_ID, 0)).toEqual(requests);
      expect(await reopened.claim(request('runner-b', 2_000))).toBeNull();
      await reopened.close();
    });
  });
}
