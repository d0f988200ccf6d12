import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRecorder } from '../../../agent/types.js';
import type { EventBody } from '../../../events/event-types.js';
import type { Handoff } from '../../../events/handoff.js';
import type { EventStore } from '../../../store/events/event-store.js';
import { createMemoryEventStore } from '../../../store/events/memory-event-store.js';
import { openSqliteTaskStore } from '../../../store/sqlite/sqlite-task-store.js';
import { createPlannerRoleTools } from '../../../tools/planner-tools.js';
import { toolContext } from '../../../tools/testing/workspace-fixture.js';
import { createdTask, handoffOf } from '../../../store/testing/task-store-fixtures.js';
import type { TaskRecord, TaskStore } from '../../../store/tasks/task-store.js';
import { createPlannerBoard, MAX_TASK_ATTEMPTS, publishesPerAnswer, type BoardContext } from './planner-board.js';
import { RUNNER_WAKEUP, Wakeups } from '../../wakeups.js';
import { createWorkInFlight } from '../../in-flight/work-in-flight.js';
import { defaultPromptSet } from '../../prompts/prompt-set.js';

function failedHandoff(summary: string): Handoff {
  return handoffOf('failed', summary, { notes: [`note of ${summary}`] });
}

describe('the planner board', () => {
  let dir: string;
  let tasks: TaskStore;
  let context: BoardContext;
  let eventStore: EventStore;
  let events: EventBody[];
  let recorder: AgentRecorder;
  let root: TaskRecord;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-board-'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
    let clock = 1_000;
    eventStore = createMemoryEventStore();
    context = { runId: 'run-1', tasks, wakeups: new Wakeups(), now: () => (clock += 1), workInFlight: createWorkInFlight(eventStore, 'run-1') };
    events = [];
    recorder = {
      record: (event) => {
        events.push(event);
        eventStore.append({ ...event, runId: 'run-1', agentId: 'planner-a' });
      },
      flush: () => eventStore.flush(),
    };
    root = createdTask(await tasks.createTask(
      { id: 'task-root', runId: 'run-1', parentTaskId: null, createdBy: null, kind: 'planner', title: 'Goal', body: 'goal', scope: null, retryOf: null },
      1,
    ));
  });

  afterEach(async () => {
    await tasks.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes worker tasks as children of the planner, records them and wakes the runner', async () => {
    const woken: string[] = [];
    const wakeups = new Wakeups();
    const board = createPlannerBoard({ ...context, wakeups: Object.assign(wakeups, { wake: (key: string) => woken.push(key) }) }, root, 'planner-a', recorder);
    const published = await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] });
    expect(woken).toEqual([RUNNER_WAKEUP]);
    expect(published.ok).toBe(true);
    const id = published.ok ? published.taskId : '';
    expect(await tasks.getTask(id)).toMatchObject({ parentTaskId: 'task-root', createdBy: 'planner-a', kind: 'worker', title: 'Build x', body: 'Build x.js', status: 'open' });
    expect(events).toContainEqual({ type: 'task.created', data: { taskId: id, parentTaskId: 'task-root', kind: 'worker', title: 'Build x', scope: null, retryOf: null, paths: [] } });
  });

  it('keeps the paths a task declares, and names the tasks in flight they meet without refusing the task', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const first = await board.createTask({ title: 'Build pad', brief: 'b', retryOf: null, paths: ['./src/text/pad.js', 'src/index.js', 'src/index.js'] });
    expect(first).toMatchObject({ ok: true, overlaps: [] });
    const firstId = first.ok ? first.taskId : '';
    expect((await tasks.getTask(firstId))?.paths).toEqual(['src/text/pad.js', 'src/index.js']);
    expect(events.at(-1)).toMatchObject({ type: 'task.created', data: { taskId: firstId, paths: ['src/text/pad.js', 'src/index.js'] } });

    const second = await board.createTask({ title: 'Build case', brief: 'b', retryOf: null, paths: ['src/text/', 'README.md'] });
    expect(second).toMatchObject({
      ok: true,
      overlaps: [{ taskId: firstId, title: 'Build pad', kind: 'worker', state: 'open', declared: ['src/text/pad.js'], touched: [] }],
    });
    expect((await tasks.getTask(second.ok ? second.taskId : ''))?.status).toBe('open');

    // A closed task meets nothing.
    const claimed = await tasks.claim({ runId: 'run-1', holder: 'r', kinds: ['worker'], now: context.now(), leaseMs: 60_000 });
    expect(claimed?.id).toBe(firstId);
    await tasks.complete(firstId, { holder: 'r', attempt: 1 }, handoffOf('done', 'built'), context.now());
    eventStore.append({ type: 'handoff.delivered', data: { taskId: firstId, parentTaskId: root.id, status: 'done' }, runId: 'run-1', agentId: 'system' });
    const third = await board.createTask({ title: 'Build index', brief: 'b', retryOf: null, paths: ['src/index.js'] });
    expect(third).toMatchObject({ ok: true, overlaps: [] });
  });

  it('create_task says plainly which task in flight its paths meet, and what to do about it', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const tools = createPlannerRoleTools(board);
    const createTask = tools.find((tool) => tool.name === 'create_task');
    if (createTask === undefined) throw new Error('no create_task tool');
    const call = async (input: unknown) => createTask.execute(createTask.parameters.parse(input), toolContext());

    const first = await call({ title: 'Build pad', brief: 'b', paths: ['src/text/pad.js', 'src/index.js'] });
    expect(first).toEqual({ ok: true, output: expect.stringMatching(/^Created task task-\S+: Build pad\nIts handoff will arrive/) });
    expect(first.ok && first.output).not.toContain('Overlap');
    const firstId = first.ok ? (/^Created task (\S+):/.exec(first.output)?.[1] ?? '') : '';
    eventStore.append({ type: 'task.claimed', data: { taskId: firstId, kind: 'worker', attempt: 1, holder: 'r' }, runId: 'run-1', agentId: 'system' });

    const second = await call({ title: 'Build case', brief: 'b', paths: ['src/text/', 'src/index.js'] });
    if (!second.ok) throw new Error(second.error);
    const lines = second.output.split('\n');
    expect(lines[0]).toMatch(/^Created task task-\S+: Build case$/);
    expect(lines[2]).toBe("Overlap: this task's paths meet work still in flight, so they may conflict when both merge:");
    expect(lines[3]).toBe(`- task ${firstId} "Build pad" (running): declared src/text/pad.js, src/index.js`);
    expect(lines[4]).toMatch(/after the other task's handoff arrives, or slice it so each task changes different files\.$/);

    expect(createTask.parameters.safeParse({ title: 't', brief: 'b', paths: Array.from({ length: 51 }, (_, index) => `f${index}.js`) }).success).toBe(false);
  });

  it("create_task stores a task's acceptance commands, records them and names them at the end of the worker's brief", async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const createTask = createPlannerRoleTools(board).find((tool) => tool.name === 'create_task');
    if (createTask === undefined) throw new Error('no create_task tool');
    const result = await createTask.execute(
      createTask.parameters.parse({ title: 'Build pad', brief: 'Build it.', acceptance: ['  node --test ', 'npm run lint'] }),
      toolContext(),
    );
    expect(result.ok).toBe(true);
    const [task] = await tasks.listChildren(root.id);
    expect(task?.acceptance).toEqual(['node --test', 'npm run lint']);
    expect(task?.body).toMatch(/^Build it\.\n\n## Acceptance checks\n\nWhen you have handed off, colony checks out main at your last merge/);
    expect(task?.body.endsWith('\n\n- `node --test`\n- `npm run lint`')).toBe(true);
    expect(events.find((event) => event.type === 'task.created')).toMatchObject({ data: { taskId: task?.id, acceptance: ['node --test', 'npm run lint'] } });

    // Without acceptance, nothing is added: no section, no field in the event.
    await board.createTask({ title: 'Build case', brief: 'Build it.', retryOf: null, paths: [] });
    const plain = (await tasks.listChildren(root.id))[1];
    expect(plain).toMatchObject({ body: 'Build it.', acceptance: [] });
    expect(events.filter((event) => event.type === 'task.created').at(-1)?.data).not.toHaveProperty('acceptance');

    // One to five commands, none empty, none too long.
    const parses = (acceptance: unknown) => createTask.parameters.safeParse({ title: 't', brief: 'b', acceptance }).success;
    expect(parses([])).toBe(false);
    expect(parses(['  '])).toBe(false);
    expect(parses(Array.from({ length: 6 }, () => 'true'))).toBe(false);
    expect(parses(['x'.repeat(1_001)])).toBe(false);
    expect(parses(Array.from({ length: 5 }, () => 'x'.repeat(1_000)))).toBe(true);
  });

  it('refuses paths outside the repository, publishing nothing', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    for (const path of ['../x.js', '/etc/hosts', '.']) {
      expect(await board.createTask({ title: 'x', brief: 'b', retryOf: null, paths: ['src/ok.js', path] })).toEqual({
        ok: false,
        error: expect.stringContaining(`paths: ${JSON.stringify(path)} is not a file or folder inside the repository`),
      });
    }
    expect(await tasks.listTasks('run-1')).toHaveLength(1);
  });

  it('appends every earlier attempt of a retried task to its brief, oldest first', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const closeAs = async (id: string, summary: string) => {
      const claimed = await tasks.claim({ runId: 'run-1', holder: 'r', kinds: ['worker'], now: context.now(), leaseMs: 60_000 });
      expect(claimed?.id).toBe(id);
      expect((await tasks.complete(id, { holder: 'r', attempt: 1 }, failedHandoff(summary), context.now())).ok).toBe(true);
    };
    const first = await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] });
    if (!first.ok) throw new Error(first.error);
    await closeAs(first.taskId, 'first try broke');
    const second = await board.createTask({ title: 'Build x', brief: 'Build x.js again', retryOf: first.taskId, paths: [] });
    if (!second.ok) throw new Error(second.error);
    await closeAs(second.taskId, 'second try broke');
    const third = await board.createTask({ title: 'Build x', brief: 'Build x.js, third time', retryOf: second.taskId, paths: [] });
    if (!third.ok) throw new Error(third.error);
    const body = (await tasks.getTask(third.taskId))?.body ?? '';
    expect(body.startsWith('Build x.js, third time\n\n## Earlier attempts')).toBe(true);
    expect(body.indexOf('first try broke')).toBeGreaterThan(0);
    expect(body.indexOf('second try broke')).toBeGreaterThan(body.indexOf('first try broke'));
    expect(body).toContain('- note of second try broke');
  });

  it(`takes ${MAX_TASK_ATTEMPTS} attempts of a task and refuses the next retry with what to do instead`, async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    let retryOf: string | null = null;
    for (let attempt = 1; attempt <= MAX_TASK_ATTEMPTS; attempt += 1) {
      const published = await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf, paths: [] });
      if (!published.ok) throw new Error(published.error);
      const claimed = await tasks.claim({ runId: 'run-1', holder: 'r', kinds: ['worker'], now: context.now(), leaseMs: 60_000 });
      expect(claimed?.id).toBe(published.taskId);
      const handoff = attempt < MAX_TASK_ATTEMPTS ? failedHandoff(`try ${attempt} broke`) : handoffOf('failed', 'The worker ended without a handoff: the step budget ran out (100 model calls).', { synthetic: true });
      expect((await tasks.complete(published.taskId, { holder: 'r', attempt: 1 }, handoff, context.now())).ok).toBe(true);
      retryOf = published.taskId;
    }
    const created = (await tasks.listChildren(root.id)).length;
    const refused = await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf, paths: [] });
    expect(refused.ok).toBe(false);
    const error = refused.ok ? '' : refused.error;
    expect(error).toMatch(new RegExp(`^Not retried: this task has been tried ${MAX_TASK_ATTEMPTS} times \\(task-\\S+ failed, `));
    // Its last worker ran out of steps: the advice is to split it.
    expect(error).toContain('split the work into smaller tasks (without retry_of)');
    expect(await tasks.listChildren(root.id)).toHaveLength(created);
    // The planner's prompt counts the retries the same way.
    expect(defaultPromptSet().text('planner')).toContain(`colony takes at most ${MAX_TASK_ATTEMPTS - 1} retries of a task`);
  });

  describe('a failed task\'s brief published again without retry_of', () => {
    /** Claims the next worker task, which must be `id`, and closes it with `handoff`. */
    const closeAs = async (id: string, handoff: Handoff) => {
      const claimed = await tasks.claim({ runId: 'run-1', holder: 'r', kinds: ['worker'], now: context.now(), leaseMs: 60_000 });
      expect(claimed?.id).toBe(id);
      expect((await tasks.complete(id, { holder: 'r', attempt: 1 }, handoff, context.now())).ok).toBe(true);
    };
    const publishedId = (result: Awaited<ReturnType<ReturnType<typeof createPlannerBoard>['createTask']>>): string => {
      if (!result.ok) throw new Error(result.error);
      return result.taskId;
    };

    it('is refused once, naming the task, how it ended and retry_of; the same brief again is taken', async () => {
      const board = createPlannerBoard(context, root, 'planner-a', recorder);
      const first = publishedId(await board.createTask({ title: 'Build x', brief: 'Build x.js\nwith its tests', retryOf: null, paths: [], acceptance: ['npm test'] }));
      await closeAs(first, failedHandoff('x broke'));
      const again = await board.createTask({ title: 'Build x', brief: '  Build x.js with   its tests\n', retryOf: null, paths: [] });
      expect(again).toEqual({ ok: false, error: expect.stringMatching(new RegExp(`^Not published: this brief is task ${first}'s \\("Build x"\\), which ended failed\\. .*retry_of: ${first}`)) });
      expect(await tasks.listChildren(root.id)).toHaveLength(1);
      expect((await board.createTask({ title: 'Build x', brief: 'Build x.js with its tests', retryOf: null, paths: [] })).ok).toBe(true);
    });

    it('is not refused for a different brief, a retry, a task that ended done, or one still open', async () => {
      const board = createPlannerBoard(context, root, 'planner-a', recorder);
      const failed = publishedId(await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] }));
      await closeAs(failed, handoffOf('blocked', 'x needs y'));
      const landed = publishedId(await board.createTask({ title: 'Build z', brief: 'Build z.js', retryOf: null, paths: [] }));
      await closeAs(landed, handoffOf('done', 'z is on main'));
      expect((await board.createTask({ title: 'Build z', brief: 'Build z.js', retryOf: null, paths: [] })).ok).toBe(true);
      expect((await board.createTask({ title: 'Build y', brief: 'Build y.js, which x needs', retryOf: null, paths: [] })).ok).toBe(true);
      expect((await board.createTask({ title: 'Build y', brief: 'Build y.js, which x needs', retryOf: null, paths: [] })).ok).toBe(true);
      expect((await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: failed, paths: [] })).ok).toBe(true);
      // Retried already: its brief is free again.
      expect((await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] })).ok).toBe(true);
    });

    it('knows the planner\'s tasks from before a restart, and leads into the retry cap through retry_of', async () => {
      const before = createPlannerBoard(context, root, 'planner-a', recorder);
      let last = publishedId(await before.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [], acceptance: ['npm test'] }));
      await closeAs(last, failedHandoff('try 1 broke'));
      const board = createPlannerBoard(context, root, 'planner-a', recorder);
      expect(await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] })).toMatchObject({ ok: false, error: expect.stringMatching(/^Not published: /) });
      for (let attempt = 2; attempt <= MAX_TASK_ATTEMPTS; attempt += 1) {
        last = publishedId(await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: last, paths: [] }));
        await closeAs(last, failedHandoff(`try ${attempt} broke`));
      }
      expect(await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: last, paths: [] })).toMatchObject({ ok: false, error: expect.stringMatching(/^Not retried: /) });
      // The last retry's brief, published again as it was, is refused once too.
      expect(await board.createTask({ title: 'Build x', brief: 'Build x.js', retryOf: null, paths: [] })).toMatchObject({ ok: false, error: expect.stringContaining(`task ${last}'s`) });
    });
  });

  it('publishes at most its bound of tasks in one answer, counting delegations, and counts again from the next answer', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder, { publishesPerAnswer: publishesPerAnswer(1) });
    expect(publishesPerAnswer(1)).toBe(4);
    expect(publishesPerAnswer(8)).toBe(16);
    board.startAnswer();
    const results = [
      await board.createTask({ title: 'a', brief: 'a', retryOf: null, paths: [] }),
      await board.delegate({ title: 'lib', scope: 'src/lib/', brief: 'the lib' }),
      await board.createTask({ title: 'b', brief: 'b', retryOf: null, paths: [] }),
      // A refused call does not count.
      await board.createTask({ title: 'c', brief: 'c', retryOf: null, paths: ['../outside.js'] }),
      await board.createTask({ title: 'd', brief: 'd', retryOf: null, paths: [] }),
      await board.createTask({ title: 'e', brief: 'e', retryOf: null, paths: [] }),
      await board.delegate({ title: 'app', scope: 'src/app/', brief: 'the app' }),
    ];
    expect(results.map((result) => result.ok)).toEqual([true, true, true, false, true, false, false]);
    const bounded = results[5];
    expect(bounded?.ok === false ? bounded.error : '').toMatch(/^Not published now: at most 4 tasks \(create_task and delegate together\) are published in one answer/);
    board.startAnswer();
    expect((await board.createTask({ title: 'e', brief: 'e', retryOf: null, paths: [] })).ok).toBe(true);
  });

  it('refuses to retry a task that is not the planner’s own', async () => {
    await tasks.createTask(
      { id: 'task-elsewhere', runId: 'run-1', parentTaskId: root.id, createdBy: 'planner-a', kind: 'planner', title: 'z', body: 'z', scope: 'src/z/', retryOf: null },
      2,
    );
    const other = createdTask(await tasks.createTask(
      { id: 'task-other', runId: 'run-1', parentTaskId: 'task-elsewhere', createdBy: 'planner-b', kind: 'worker', title: 'y', body: 'y', scope: null, retryOf: null },
      3,
    ));
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const retried = await board.createTask({ title: 'y', brief: 'y', retryOf: other.id, paths: [] });
    expect(retried).toEqual({ ok: false, error: expect.stringContaining('task-other is not one of your tasks') });
  });

  it('delegates a scope with the scope line above the brief, normalising the path', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    const delegated = await board.delegate({ title: 'Own geo', scope: './src/geo', brief: 'Build the geometry helpers.' });
    if (!delegated.ok) throw new Error(delegated.error);
    const task = await tasks.getTask(delegated.taskId);
    expect(task).toMatchObject({ kind: 'planner', scope: 'src/geo/' });
    expect(task?.body).toBe('Your scope: `src/geo/` (you own this slice of the repository).\n\nBuild the geometry helpers.');
  });

  it('refuses scopes outside the repository, outside its own scope, equal to it, or overlapping an open one', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    expect(await board.delegate({ title: 'x', scope: '../elsewhere', brief: 'b' })).toMatchObject({ ok: false, error: expect.stringContaining('inside the repository') });
    expect(await board.delegate({ title: 'x', scope: '/etc', brief: 'b' })).toMatchObject({ ok: false });
    const geo = await board.delegate({ title: 'geo', scope: 'src/geo/', brief: 'b' });
    expect(geo.ok).toBe(true);
    expect(await board.delegate({ title: 'x', scope: 'src/geo/shapes/', brief: 'b' })).toMatchObject({ ok: false, error: expect.stringContaining('overlaps src/geo/') });
    expect(await board.delegate({ title: 'x', scope: 'src/', brief: 'b' })).toMatchObject({ ok: false, error: expect.stringContaining('overlaps') });

    const sub = await tasks.getTask(geo.ok ? geo.taskId : '');
    if (sub === null) throw new Error('no sub-planner task');
    const subBoard = createPlannerBoard(context, sub, 'planner-b', recorder);
    expect(await subBoard.delegate({ title: 'x', scope: 'src/text/', brief: 'b' })).toMatchObject({ ok: false, error: expect.stringContaining('outside your own scope') });
    expect(await subBoard.delegate({ title: 'x', scope: 'src/geo/', brief: 'b' })).toMatchObject({ ok: false, error: expect.stringContaining('your whole scope') });
    expect((await subBoard.delegate({ title: 'x', scope: 'src/geo/shapes/', brief: 'b' })).ok).toBe(true);
  });

  it('keeps the latest finish until the planner publishes again, and records andon changes in the store', async () => {
    const board = createPlannerBoard(context, root, 'planner-a', recorder);
    await board.finish({ status: 'done', summary: 'all built', evidence: '', notes: [], concerns: [], deviations: [], findings: [], feedback: [], followUps: [] });
    expect(board.finished()?.summary).toBe('all built');
    await board.createTask({ title: 'one more', brief: 'b', retryOf: null, paths: [] });
    expect(board.finished()).toBeNull();

    await board.setAndon(true, 'main is broken');
    expect(await tasks.pausedTasks('run-1')).toEqual(['task-root']);
    await board.setAndon(false, 'fixed');
    expect(await tasks.pausedTasks('run-1')).toEqual([]);
    expect(events.filter((event) => event.type === 'andon.changed').map((event) => event.data)).toEqual([
      { taskId: 'task-root', paused: true, reason: 'main is broken' },
      { taskId: 'task-root', paused: false, reason: 'fixed' },
    ]);
  });

  it("refuses the root planner's done while the release check fails, and gates no other finish", async () => {
    const verdicts = [
      { passed: false, stopped: false, check: null, refusal: 'The run cannot finish as done yet: `node --test` fails.' },
      { passed: true, stopped: false, check: null, refusal: null },
    ];
    let releases = 0;
    const gated = { ...context, green: { release: async () => verdicts[releases++] ?? { passed: true, stopped: false, check: null, refusal: null } } };
    const report = { status: 'done' as const, summary: 'all built', evidence: '', notes: [], concerns: [], deviations: [], findings: [], feedback: [], followUps: [] };
    const board = createPlannerBoard(gated, root, 'planner-a', recorder);
    expect(await board.finish(report)).toEqual({ ok: false, error: 'The run cannot finish as done yet: `node --test` fails.' });
    expect(board.finished()).toBeNull();
    expect(events.some((event) => event.type === 'planner.finished')).toBe(false);
    expect(await board.finish(report)).toEqual({ ok: true });
    expect(board.finished()?.summary).toBe('all built');
    expect(releases).toBe(2);

    // A failed root finish and a sub-planner's done end without the release check.
    const failedBoard = createPlannerBoard(gated, root, 'planner-a', recorder);
    expect(await failedBoard.finish({ ...report, status: 'failed' })).toEqual({ ok: true });
    const sub = createdTask(await tasks.createTask({ id: 'task-sub', runId: 'run-1', parentTaskId: 'task-root', createdBy: 'planner-a', kind: 'planner', title: 'Own src/', body: 'b', scope: 'src/', retryOf: null }, 5));
    expect(await createPlannerBoard(gated, sub, 'planner-b', recorder).finish(report)).toEqual({ ok: true });
    expect(releases).toBe(2);
  });
});
