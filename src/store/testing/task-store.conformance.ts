import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeTaskStoreFencing } from './task-store-fencing.conformance.js';
import { describeTaskStoreSteering } from './task-store-steering.conformance.js';
import { describeTaskStoreAndons } from './task-store-andon.conformance.js';
import { BOTH, RUN_ID, childTask, claimAll, claimRequest as request, handoffOf, lease, rootTask } from './task-store-fixtures.js';
import type { TaskRecord, TaskStore } from '../tasks/task-store.js';
import type { OpenTaskStoreUnderTest, TaskStoreUnderTest } from './task-store-fixtures.js';

const ROOT = rootTask().id;

/**
 * The one suite every TaskStore implementation must pass. `open` is called before each test
 * and must return an empty store. Times are passed in, so nothing here waits on a clock. The
 * tests of attempts (fencing by lease) and of resuming live in
 * `task-store-fencing.conformance.ts`, those of the user's hold and people's messages in
 * `task-store-steering.conformance.ts`; both run as part of this suite.
 */
export function describeTaskStoreConformance(name: string, open: OpenTaskStoreUnderTest): void {
  describe(`TaskStore conformance: ${name}`, () => {
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

    /** root -> planner-p -> (worker-1, planner-q -> worker-2); root -> worker-3. */
    async function buildTree(): Promise<void> {
      await store.createTask(childTask('planner-p', ROOT, 'planner'), 110);
      await store.createTask(childTask('worker-1', 'planner-p'), 120);
      await store.createTask(childTask('planner-q', 'planner-p', 'planner'), 130);
      await store.createTask(childTask('worker-2', 'planner-q'), 140);
      await store.createTask(childTask('worker-3', ROOT), 150);
    }

    it('creates open tasks and reads them back', async () => {
      const input = childTask('worker-1', ROOT, 'worker', { retryOf: 'worker-0', createdBy: 'agent-root' });
      const created = await store.createTask(input, 1_234);
      const expected: TaskRecord = {
        ...input,
        paths: [],
        acceptance: [],
        status: 'open',
        attempt: 0,
        leaseHolder: null,
        leaseExpiresAt: null,
        createdAt: 1_234,
        closedAt: null,
        handoff: null,
      };
      expect(created).toEqual({ ok: true, task: expected });
      expect(await store.getTask('worker-1')).toEqual(expected);
      expect(await store.getTask(ROOT)).toMatchObject({ ...rootTask(), status: 'open', createdAt: 100 });
      expect(await store.getTask('no-such-task')).toBeNull();
    });

    it('keeps the paths a task declared, in order, through every later change of the task', async () => {
      const paths = ['src/text/pad.js', 'src/text/', 'docs/naïve café.md'];
      await store.createTask(childTask('worker-1', ROOT, 'worker', { paths }), 200);
      await store.createTask(childTask('worker-2', ROOT, 'worker', { paths: [] }), 210);
      expect((await store.getTask('worker-1'))?.paths).toEqual(paths);
      expect((await store.getTask('worker-2'))?.paths).toEqual([]);
      const claimed = await store.claim(request('runner-a', 300));
      expect(claimed).toMatchObject({ id: 'worker-1', paths });
      await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'built'), 400);
      expect((await store.listTasks(RUN_ID)).map((task) => task.paths)).toEqual([[], paths, []]);
      const reopened = await underTest.reopen?.();
      if (reopened !== undefined) expect((await reopened.getTask('worker-1'))?.paths).toEqual(paths);
    });

    it('keeps the acceptance commands a task was given, in order, through every later change of the task', async () => {
      const acceptance = ['node --test', "npm run lint -- --max-warnings 0 && echo 'naïve café 🐜'"];
      await store.createTask(childTask('worker-1', ROOT, 'worker', { acceptance }), 200);
      await store.createTask(childTask('worker-2', ROOT, 'worker', { acceptance: [] }), 210);
      await store.createTask(childTask('worker-3', ROOT, 'worker', { retryOf: 'worker-1', acceptance: ['node --test src/a.test.js'] }), 220);
      expect((await store.getTask('worker-1'))?.acceptance).toEqual(acceptance);
      expect((await store.getTask('worker-2'))?.acceptance).toEqual([]);
      // A retry keeps what its own publish gave, not the acceptance of the task it retries.
      expect((await store.getTask('worker-3'))?.acceptance).toEqual(['node --test src/a.test.js']);
      const claimed = await store.claim(request('runner-a', 300));
      expect(claimed).toMatchObject({ id: 'worker-1', acceptance });
      await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'built'), 400);
      expect((await store.listTasks(RUN_ID)).map((task) => task.acceptance)).toEqual([[], acceptance, [], ['node --test src/a.test.js']]);
      expect((await store.listChildren(ROOT)).map((task) => task.acceptance)).toEqual([acceptance, [], ['node --test src/a.test.js']]);
      const reopened = await underTest.reopen?.();
      if (reopened !== undefined) expect((await reopened.getTask('worker-1'))?.acceptance).toEqual(acceptance);
    });

    it('keeps the acceptance verdict a handoff carries, and reads a handoff without one as having none', async () => {
      await store.createTask(childTask('worker-1', ROOT, 'worker', { acceptance: ['node --test'] }), 200);
      await store.createTask(childTask('worker-2', ROOT, 'worker'), 210);
      const verdict = {
        commit: 'a'.repeat(40),
        passed: false,
        skipped: null,
        results: [{ command: 'node --test', passed: false, exitCode: 1, timedOut: false, outputTail: '✖ padLeft("a", 3, "-") returns "--a"' }],
      };
      await store.claim(request('runner-a', 300));
      await store.claim(request('runner-a', 300));
      await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'built', { acceptance: verdict }), 400);
      await store.complete('worker-2', lease('runner-a'), handoffOf('done', 'built'), 410);
      expect((await store.getTask('worker-1'))?.handoff?.acceptance).toEqual(verdict);
      expect((await store.getTask('worker-2'))?.handoff?.acceptance ?? null).toBeNull();
      expect((await store.takeInbox(ROOT)).map((message) => message.handoff?.acceptance ?? null)).toEqual([verdict, null]);
    });

    it('lists the tasks of one run in creation order', async () => {
      await store.createTask(childTask('task-c', ROOT), 300);
      await store.createTask(childTask('task-a', ROOT), 100);
      await store.createTask(childTask('task-b', ROOT), 200);
      await store.createTask(rootTask('run-2'), 50);
      expect((await store.listTasks(RUN_ID)).map((task) => task.id)).toEqual([ROOT, 'task-c', 'task-a', 'task-b']);
      expect((await store.listTasks('run-2')).map((task) => task.id)).toEqual(['root-of-run-2']);
      expect(await store.listTasks('run-unknown')).toEqual([]);
    });

    it('refuses a taken id and a parent that is not a task of the run, storing nothing', async () => {
      await store.createTask(rootTask('run-2'), 100);
      await expect(store.createTask(childTask(ROOT, ROOT), 200)).rejects.toThrow(ROOT);
      await expect(store.createTask(childTask('orphan', 'no-such-task'), 200)).rejects.toThrow(/no-such-task/);
      await expect(store.createTask(childTask('stray', 'root-of-run-2'), 200)).rejects.toThrow(/root-of-run-2/);
      expect((await store.listTasks(RUN_ID)).map((task) => task.id)).toEqual([ROOT]);
      expect(await store.getTask('orphan')).toBeNull();
    });

    it('claims the oldest claimable task in creation order and leases it', async () => {
      await store.createTask(childTask('task-c', ROOT), 300);
      await store.createTask(childTask('task-a', ROOT), 100);
      const claimed = await store.claim(request('runner-a', 5_000, ['worker'], 30_000));
      expect(claimed).toMatchObject({ id: 'task-c', status: 'running', leaseHolder: 'runner-a', attempt: 1 });
      expect(claimed?.leaseExpiresAt).toBe(35_000);
      expect(await store.getTask('task-c')).toEqual(claimed);
      expect((await store.claim(request('runner-a', 5_000)))?.id).toBe('task-a');
      expect(await store.claim(request('runner-a', 5_000))).toBeNull();
    });

    it('claims only the requested kinds of the requested run', async () => {
      await buildTree();
      await store.createTask(rootTask('run-2'), 100);
      await store.createTask({ ...childTask('worker-of-run-2', 'root-of-run-2'), runId: 'run-2' }, 100);
      expect(await store.claim(request('runner', 1_000, []))).toBeNull();
      expect(await claimAll(store, request('runner', 1_000, ['planner']))).toEqual([ROOT, 'planner-p', 'planner-q']);
      expect(await claimAll(store, request('runner', 1_000, ['worker']))).toEqual(['worker-1', 'worker-2', 'worker-3']);
      expect((await store.claim({ ...request('runner', 1_000, BOTH), runId: 'run-2' }))?.id).toBe('root-of-run-2');
      expect((await store.claim({ ...request('runner', 1_000, BOTH), runId: 'run-2' }))?.id).toBe('worker-of-run-2');
      expect(await store.claim({ ...request('runner', 1_000, BOTH), runId: 'run-3' })).toBeNull();
    });

    it('takes the oldest task of either kind when asked for both', async () => {
      await buildTree();
      expect(await claimAll(store, request('runner', 1_000, BOTH))).toEqual([
        ROOT,
        'planner-p',
        'worker-1',
        'planner-q',
        'worker-2',
        'worker-3',
      ]);
    });

    it('never hands one task to two claimers', async () => {
      for (let index = 0; index < 30; index += 1) await store.createTask(childTask(`worker-${index}`, ROOT), 200 + index);
      const second = (await underTest.reopen?.()) ?? store;
      const claimers = [
        { store, holder: 'runner-a' },
        { store: second, holder: 'runner-b' },
        { store, holder: 'runner-c' },
      ];
      const claimed: TaskRecord[] = [];
      let progress = true;
      while (progress) {
        progress = false;
        for (const claimer of claimers) {
          const task = await claimer.store.claim(request(claimer.holder, 1_000));
          if (task !== null) claimed.push(task);
          progress ||= task !== null;
        }
      }
      expect(claimed).toHaveLength(30);
      expect(new Set(claimed.map((task) => task.id)).size).toBe(30);
      expect(claimed.every((task) => task.attempt === 1)).toBe(true);
      for (const claimer of claimers) expect(await claimer.store.claim(request(claimer.holder, 1_000))).toBeNull();
      if (second !== store) await second.close();
    });

    it('renews the leases a holder holds, and only those', async () => {
      for (const id of ['worker-1', 'worker-2', 'worker-3']) await store.createTask(childTask(id, ROOT), 200);
      await store.claim(request('runner-a', 1_000, ['worker'], 500));
      await store.claim(request('runner-a', 1_000, ['worker'], 500));
      await store.claim(request('runner-b', 1_000, ['worker'], 500));
      expect((await store.complete('worker-2', lease('runner-a'), handoffOf('done', 'Done.'), 1_200)).ok).toBe(true);
      expect(await store.renewLeases('runner-a', 1_400, 1_000)).toBe(1);
      expect((await store.getTask('worker-1'))?.leaseExpiresAt).toBe(2_400);
      expect((await store.getTask('worker-2'))?.leaseExpiresAt).toBeNull();
      expect((await store.getTask('worker-3'))?.leaseExpiresAt).toBe(1_500);
      expect(await store.renewLeases('runner-a', 1_400, 10)).toBe(1);
      expect((await store.getTask('worker-1'))?.leaseExpiresAt).toBe(2_400);
      expect(await store.renewLeases('nobody', 1_400, 1_000)).toBe(0);
      // The renewed lease holds at 2000; runner-b's, not renewed, expired at 1500.
      expect(await store.claim(request('runner-c', 2_000))).toMatchObject({ id: 'worker-3', attempt: 2 });
      expect(await store.claim(request('runner-c', 2_000))).toBeNull();
    });

    it('lets another runner re-claim a task once its lease has expired', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      await store.claim(request('runner-a', 1_000, ['worker'], 100));
      expect(await store.claim(request('runner-b', 1_100))).toBeNull();
      const reclaimed = await store.claim(request('runner-b', 1_101, ['worker'], 100));
      expect(reclaimed).toMatchObject({ id: 'worker-1', leaseHolder: 'runner-b', leaseExpiresAt: 1_201, attempt: 2 });
      const late = await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'Late.'), 1_150);
      expect(late.ok).toBe(false);
      expect(!late.ok && late.error).toMatch(/worker-1/);
      expect(await store.release('worker-1', lease('runner-a'))).toBe(false);
      expect(await store.renewLeases('runner-a', 1_150, 1_000)).toBe(0);
      expect(await store.getTask('worker-1')).toEqual(reclaimed);
      expect(await store.takeInbox(ROOT)).toEqual([]);
      const completed = await store.complete('worker-1', lease('runner-b', 2), handoffOf('done', 'Done.'), 1_160);
      expect(completed).toMatchObject({ ok: true, task: { status: 'done', leaseHolder: 'runner-b', attempt: 2 } });
    });

    it('keeps an expired lease held until someone re-claims it', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      await store.createTask(childTask('worker-2', ROOT), 200);
      await store.claim(request('runner-a', 1_000, ['worker'], 100));
      await store.claim(request('runner-a', 1_000, ['worker'], 100));
      expect(await store.renewLeases('runner-a', 9_000, 100)).toBe(2);
      expect((await store.getTask('worker-1'))?.leaseExpiresAt).toBe(9_100);
      expect(await store.release('worker-2', lease('runner-a'))).toBe(true);
      const result = await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'Slow but done.'), 20_000);
      expect(result).toMatchObject({ ok: true, task: { status: 'done', attempt: 1 } });
    });

    it('gives a released task back, open and without a lease', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      await store.claim(request('runner-a', 1_000));
      expect(await store.release('worker-1', lease('runner-b'))).toBe(false);
      expect(await store.release('worker-1', lease('runner-a'))).toBe(true);
      expect(await store.getTask('worker-1')).toMatchObject({
        status: 'open',
        leaseHolder: null,
        leaseExpiresAt: null,
        attempt: 1,
      });
      expect(await store.release('worker-1', lease('runner-a'))).toBe(false);
      expect(await store.claim(request('runner-b', 1_001))).toMatchObject({ id: 'worker-1', attempt: 2 });
      await store.complete('worker-1', lease('runner-b', 2), handoffOf('done', 'Done.'), 1_002);
      expect(await store.release('worker-1', lease('runner-b', 2))).toBe(false);
      expect(await store.release('no-such-task', lease('runner-b'))).toBe(false);
      expect((await store.getTask('worker-1'))?.status).toBe('done');
    });

    it("closes a task with its handoff and delivers it to the parent's inbox exactly once", async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      await store.claim(request('runner-a', 1_000));
      const handoff = handoffOf('partial', 'Parser done; printer drops comments.', {
        commits: ['3f9c2e1'],
        followUps: ['Keep comments in the printer'],
      });
      const result = await store.complete('worker-1', lease('runner-a'), handoff, 2_000);
      if (!result.ok) throw new Error(result.error);
      expect(result.task).toMatchObject({
        id: 'worker-1',
        status: 'partial',
        closedAt: 2_000,
        leaseHolder: 'runner-a',
        leaseExpiresAt: null,
        attempt: 1,
      });
      expect(result.task.handoff).toEqual(handoff);
      expect(await store.getTask('worker-1')).toEqual(result.task);
      expect(result.delivered).toEqual({
        seq: expect.any(Number),
        runId: RUN_ID,
        recipientTaskId: ROOT,
        fromTaskId: 'worker-1',
        handoff,
        text: null,
        sender: null,
        createdAt: 2_000,
      });
      const again = await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'Again.'), 3_000);
      expect(again.ok).toBe(false);
      expect(!again.ok && again.error).toMatch(/worker-1/);
      expect(await store.getTask('worker-1')).toEqual(result.task);
      expect(await store.unreadCount(ROOT)).toBe(1);
      expect(await store.deliveredHandoffs(RUN_ID)).toEqual([result.delivered]);
      expect(await store.takeInbox(ROOT)).toEqual([result.delivered]);
    });

    it('closes a task with the status its handoff names', async () => {
      const statuses = ['done', 'partial', 'blocked', 'failed'] as const;
      for (const status of statuses) await store.createTask(childTask(`worker-${status}`, ROOT), 200);
      for (const status of statuses) {
        const task = await store.claim(request('runner-a', 1_000));
        expect(task?.id).toBe(`worker-${status}`);
        await store.complete(`worker-${status}`, lease('runner-a'), handoffOf(status, `Ended ${status}.`), 1_100);
        expect((await store.getTask(`worker-${status}`))?.status).toBe(status);
      }
      expect(await store.claim(request('runner-a', 99_999))).toBeNull();
      expect((await store.deliveredHandoffs(RUN_ID)).map((message) => message.handoff?.status)).toEqual([...statuses]);
    });

    it('refuses to complete a task that is not running under the holder, changing nothing', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      const before = await store.getTask('worker-1');
      const unclaimed = await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'Done.'), 1_000);
      expect(unclaimed.ok).toBe(false);
      expect(await store.getTask('worker-1')).toEqual(before);
      const unknown = await store.complete('no-such-task', lease('runner-a'), handoffOf('done', 'Done.'), 1_000);
      expect(!unknown.ok && unknown.error).toMatch(/no-such-task/);
      const claimed = await store.claim(request('runner-a', 1_000));
      const stranger = await store.complete('worker-1', lease('runner-b'), handoffOf('done', 'Done.'), 1_000);
      expect(stranger.ok).toBe(false);
      expect(await store.getTask('worker-1')).toEqual(claimed);
      expect(await store.unreadCount(ROOT)).toBe(0);
      expect(await store.deliveredHandoffs(RUN_ID)).toEqual([]);
    });

    it('completes the root task without a delivery', async () => {
      const claimed = await store.claim(request('runner-a', 1_000, ['planner']));
      expect(claimed?.id).toBe(ROOT);
      const result = await store.complete(ROOT, lease('runner-a'), handoffOf('done', 'The goal is met.'), 2_000);
      expect(result).toMatchObject({ ok: true, delivered: null, task: { id: ROOT, status: 'done' } });
      expect(await store.deliveredHandoffs(RUN_ID)).toEqual([]);
    });

    it('hands out inbox messages in the order they arrived, each once', async () => {
      await buildTree();
      await store.claim(request('runner-a', 1_000)); // worker-1, under planner-p
      await store.claim(request('runner-a', 1_000)); // worker-2, under planner-q
      await store.claim(request('runner-a', 1_000)); // worker-3, under the root
      const message = await store.sendMessage(RUN_ID, 'planner-p', 'Prefer small commits.', 1_100);
      await store.complete('worker-3', lease('runner-a'), handoffOf('done', 'Three.'), 1_150);
      await store.sendMessage(RUN_ID, 'planner-q', 'For q only.', 1_175);
      const first = await store.complete('worker-1', lease('runner-a'), handoffOf('failed', 'One broke.'), 1_200);
      expect(await store.unreadCount('planner-p')).toBe(2);
      const taken = await store.takeInbox('planner-p');
      expect(taken).toEqual([message, first.ok ? first.delivered : null]);
      expect(taken[0]?.seq).toBeLessThan(taken[1]?.seq ?? 0);
      expect(await store.takeInbox('planner-p')).toEqual([]);
      expect(await store.unreadCount('planner-p')).toBe(0);
      const later = await store.sendMessage(RUN_ID, 'planner-p', 'One more thing.', 1_300);
      expect(later.seq).toBeGreaterThan(taken[1]?.seq ?? Infinity);
      expect(await store.takeInbox('planner-p')).toEqual([later]);
      expect((await store.takeInbox('planner-q')).map((each) => each.text)).toEqual(['For q only.']);
      expect((await store.takeInbox(ROOT)).map((each) => each.fromTaskId)).toEqual(['worker-3']);
      expect(await store.takeInbox('no-such-task')).toEqual([]);
    });

    it('leaves messages from a person in a planner task of the run only', async () => {
      await buildTree();
      await store.createTask(rootTask('run-2'), 100);
      const message = await store.sendMessage(RUN_ID, 'planner-q', 'Stop touching the lexer.\n— a person', 1_000);
      expect(message).toEqual({
        seq: expect.any(Number),
        runId: RUN_ID,
        recipientTaskId: 'planner-q',
        fromTaskId: null,
        handoff: null,
        text: 'Stop touching the lexer.\n— a person',
        createdAt: 1_000,
        sender: 'person',
      });
      expect(await store.unreadCount('planner-q')).toBe(1);
      await expect(store.sendMessage(RUN_ID, 'worker-1', 'Hi', 1_000)).rejects.toThrow(/worker-1/);
      await expect(store.sendMessage(RUN_ID, 'no-such-task', 'Hi', 1_000)).rejects.toThrow(/no-such-task/);
      await expect(store.sendMessage(RUN_ID, 'root-of-run-2', 'Hi', 1_000)).rejects.toThrow(/root-of-run-2/);
      expect(await store.unreadCount('worker-1')).toBe(0);
      expect(await store.deliveredHandoffs(RUN_ID)).toEqual([]);
    });

    describeTaskStoreAndons(() => store, buildTree);

    it('cannot be changed through the objects it hands out', async () => {
      await store.createTask(childTask('worker-1', ROOT), 200);
      await store.claim(request('runner-a', 1_000));
      const result = await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'Done.', { notes: ['kept'] }), 1_100);
      if (!result.ok) throw new Error(result.error);
      result.task.handoff?.notes.push('changed');
      result.delivered?.handoff?.notes.push('changed');
      const read = await store.getTask('worker-1');
      read?.handoff?.notes.push('changed again');
      expect((await store.getTask('worker-1'))?.handoff?.notes).toEqual(['kept']);
      expect((await store.takeInbox(ROOT))[0]?.handoff?.notes).toEqual(['kept']);
    });

    it('refuses use after close', async () => {
      await store.close();
      await expect(store.getTask(ROOT)).rejects.toThrow(/closed/);
      await expect(store.claim(request('runner-a', 1_000, BOTH))).rejects.toThrow(/closed/);
    });

    it('keeps every task, lease, message and andon across reopening', async (context) => {
      const { reopen } = underTest;
      if (reopen === undefined) {
        context.skip();
        return;
      }
      await buildTree();
      await store.claim(request('runner-a', 1_000, ['worker'], 60_000)); // worker-1
      await store.claim(request('runner-a', 1_000, ['worker'], 60_000)); // worker-2
      await store.complete('worker-2', lease('runner-a'), handoffOf('blocked', 'Needs a decision.'), 1_100);
      await store.sendMessage(RUN_ID, 'planner-p', 'Read this.', 1_200);
      await store.complete('worker-1', lease('runner-a'), handoffOf('done', 'One.'), 1_300);
      await store.takeInbox('planner-p');
      await store.sendMessage(RUN_ID, 'planner-p', 'And this.', 1_400);
      await store.setAndon('planner-q', true, 1_500);
      const tasks = await store.listTasks(RUN_ID);
      const delivered = await store.deliveredHandoffs(RUN_ID);
      await store.close();
      const reopened = await reopen();
      expect(await reopened.listTasks(RUN_ID)).toEqual(tasks);
      expect(await reopened.deliveredHandoffs(RUN_ID)).toEqual(delivered);
      expect(await reopened.pausedTasks(RUN_ID)).toEqual(['planner-q']);
      expect((await reopened.takeInbox('planner-p')).map((message) => message.text)).toEqual(['And this.']);
      expect((await reopened.takeInbox('planner-q')).map((message) => message.fromTaskId)).toEqual(['worker-2']);
      const claimable = await claimAll(reopened, request('runner-b', 2_000, BOTH));
      expect(claimable).toEqual([ROOT, 'planner-p', 'planner-q', 'worker-3']);
      await reopened.close();
    });

    describeTaskStoreFencing(open);
    describeTaskStoreSteering(open);
  });
}
