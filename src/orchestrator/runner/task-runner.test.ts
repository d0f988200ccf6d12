import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import type { ChatModel, ModelRequest } from '../../model/chat-model.js';
import type { TaskRecord, TaskStore } from '../../store/tasks/task-store.js';
import { type ExampleRepository } from '../../../test/testing/example-repository.js';
import { runTasks } from './task-runner.js';
import { openTestRun, scriptedPlanner, simModel } from '../../../test/testing/test-run.js';
import { createWorkspaceQuota } from '../setup/workspace-quota.js';
import { createSteeringRecorder } from '../steering/steering-record.js';

const PAD_TASK = readFileSync(new URL('../../../examples/text-kit/tasks/01-pad.md', import.meta.url), 'utf8');
const CASE_TASK = readFileSync(new URL('../../../examples/text-kit/tasks/02-case.md', import.meta.url), 'utf8');
const SLUG_TASK = readFileSync(new URL('../../../examples/text-kit/tasks/03-slug.md', import.meta.url), 'utf8');

/** The request's last message when a user message, the files-in-flight notice after the conversation left out. */
function lastUserText(request: ModelRequest): string {
  const conversation = request.messages.filter((message) => !(message.role === 'user' && message.content.startsWith('Files in flight')));
  const last = conversation.at(-1);
  return last?.role === 'user' ? last.content : '';
}

describe('the task runner', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  async function setUp(plannerModel: ChatModel, workerModel: ChatModel = simModel()) {
    const opened = await openTestRun(plannerModel, workerModel);
    ({ example, tasks } = opened);
    return opened;
  }

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  /** `count` open worker tasks under the root, task-1 on, their briefs taken in turn from `briefs`. */
  async function publishWorkers(rootId: string, count: number, briefs: readonly string[]): Promise<void> {
    for (let n = 0; n < count; n += 1) {
      const body = briefs[n % briefs.length] ?? PAD_TASK;
      await tasks.createTask({ id: `task-${n + 1}`, runId: 'run-1', parentTaskId: rootId, createdBy: null, kind: 'worker', title: `Build part ${n + 1}`, body, scope: null, retryOf: null }, Date.now());
    }
  }

  it('wakes a planner that finished when a late handoff arrives; it replans and finishes again', async () => {
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) {
        return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }, { name: 'finish', input: { status: 'done', summary: 'published pad' } }] };
      }
      return { text: 'The pad handoff arrived after I finished; replanning.', calls: [{ name: 'finish', input: { status: 'done', summary: `replanned after: ${lastUserText(request).split('\n')[1] ?? ''}` } }] };
    });
    const { context, root } = await setUp(planner);
    const outcome = await runTasks({ context, holder: 'runner-1', workers: () => 2, leaseMs: 30_000, rootTaskId: root.id, signal: new AbortController().signal });

    expect(planner.requests).toHaveLength(2);
    expect(lastUserText(planner.requests[1] ?? { messages: [], tools: [] })).toMatch(/^Handoff from task task-\S+ "Build pad"\nstatus: done/);
    expect(outcome.rootHandoff).toMatchObject({ status: 'done', summary: 'replanned after: status: done' });
    const children = (await tasks.listTasks('run-1')).filter((task) => task.parentTaskId === root.id);
    expect(children.map((task) => task.status)).toEqual(['done']);
    expect((await tasks.deliveredHandoffs('run-1')).map((message) => message.fromTaskId)).toEqual([children[0]?.id]);
    expect(example.git('show', 'main:src/index.js')).toContain("export * from './text/pad.js';");
  });

  it('stops a worker that records nothing past the hang limit and closes its task with a failure handoff that says so', async () => {
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }] };
      return { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${lastUserText(request).split('\n')[2] ?? ''}` } }] };
    });
    // Every worker call after the first never answers, like a stuck connection.
    const { context, root, seen } = await setUp(planner, simModel('sim?stall=1'));
    const outcome = await runTasks({
      context: { ...context, settings: { ...context.settings, hangAfterMs: 1_500 } },
      holder: 'runner-1',
      workers: () => 1,
      leaseMs: 30_000,
      rootTaskId: root.id,
      signal: new AbortController().signal,
    });

    const child = (await tasks.listTasks('run-1')).find((task) => task.parentTaskId === root.id);
    expect(child?.status).toBe('failed');
    expect(child?.handoff).toMatchObject({ status: 'failed', synthetic: true, summary: expect.stringMatching(/^The worker hung: it recorded nothing for [\d.]+ minute\(s\)/) });
    const hung = seen.filter((event) => event.type === 'agent.hung');
    expect(hung).toMatchObject([{ data: { taskId: child?.id, limitMs: 1_500 } }]);
    // The planner heard of it like any other ending, and the run went on to its end.
    expect(outcome.rootHandoff?.summary).toMatch(/^heard: /);
  });

  it('starts nothing below a pulled andon, and nudges the planner instead of letting it wait on paused work', async () => {
    let probe: Promise<TaskRecord | null> | undefined;
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) {
        return {
          calls: [
            { name: 'andon', input: { paused: true, reason: 'hold on' } },
            { name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } },
          ],
        };
      }
      if (index === 1) return { text: 'Waiting.' };
      if (index === 2) {
        // The only child is held back by the andon: nothing may claim it.
        probe = tasks.claim({ runId: 'run-1', holder: 'probe', kinds: ['worker'], now: Date.now(), leaseMs: 1_000 });
        return { calls: [{ name: 'andon', input: { paused: false, reason: 'go' } }] };
      }
      if (lastUserText(request).startsWith('Handoff from task')) return { calls: [{ name: 'finish', input: { status: 'done', summary: 'done' } }] };
      return { text: 'Waiting.' };
    });
    const { context, root, seen } = await setUp(planner);
    const outcome = await runTasks({ context, holder: 'runner-1', workers: () => 4, leaseMs: 30_000, rootTaskId: root.id, signal: new AbortController().signal });

    expect(outcome.rootHandoff?.status).toBe('done');
    expect(await probe).toBeNull();
    expect(lastUserText(planner.requests[2] ?? { messages: [], tools: [] })).toContain('nothing is on its way to you');
    expect(seen.some((event) => event.type === 'agent.waiting' && event.data.step === 2)).toBe(false);
    const types = seen.map((event) => (event.type === 'andon.changed' ? `andon:${event.data.paused}` : event.type === 'task.claimed' ? `claimed:${event.data.kind}` : ''));
    expect(types.indexOf('claimed:worker')).toBeGreaterThan(types.indexOf('andon:false'));
  });

  it('keeps a finish as the handoff when the planner runs out of steps over a late handoff', async () => {
    const planner = scriptedPlanner(() => ({
      calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }, { name: 'finish', input: { status: 'done', summary: 'published pad' } }],
    }));
    const { context, root } = await setUp(planner);
    const outcome = await runTasks({
      context: { ...context, settings: { ...context.settings, plannerMaxSteps: 1 } },
      holder: 'runner-1',
      workers: () => 1,
      leaseMs: 30_000,
      rootTaskId: root.id,
      signal: new AbortController().signal,
    });
    expect(planner.requests).toHaveLength(1);
    expect(outcome.rootHandoff).toMatchObject({ status: 'done', summary: 'published pad', synthetic: false });
    expect(outcome.rootHandoff?.notes.at(-1)).toMatch(/^After it finished, it took in later messages and then stopped: the step budget ran out/);
  });

  it('stops on Ctrl-C: agents stop, their tasks are released rather than closed', async () => {
    const planner = scriptedPlanner((_request, index) =>
      index === 0 ? { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }] } : { text: 'Waiting.' },
    );
    const { context, root, seen } = await setUp(planner, simModel('sim?latency=300'));
    const controller = new AbortController();
    const running = runTasks({ context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: root.id, signal: controller.signal });
    while (!seen.some((event) => event.type === 'tool.ended' && event.data.name === 'list_dir')) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const outcome = await running;

    expect(outcome.rootHandoff).toBeNull();
    expect(outcome).toMatchObject({ released: 2, failure: null });
    expect((await tasks.listTasks('run-1')).map((task) => [task.status, task.leaseHolder])).toEqual([
      ['open', null],
      ['open', null],
    ]);
    expect(await tasks.deliveredHandoffs('run-1')).toEqual([]);
  });

  it('claims nothing once the run is stopped, even when the stop lands while it admits workers one by one', async () => {
    const briefs = [PAD_TASK, CASE_TASK, SLUG_TASK];
    const { context, root, seen } = await setUp(scriptedPlanner(() => ({ text: 'Waiting.' })), simModel('sim?latency=300'));
    // Nine tasks wait to be claimed when the run starts, as after a planner's first turn of a large goal.
    await publishWorkers(root.id, 9, briefs);
    // The quota measures the workspaces before each worker it admits: the runner waits between claims.
    const quota = createWorkspaceQuota({ provider: context.workspaces, capBytes: Number.MAX_SAFE_INTEGER, record: () => undefined });
    const controller = new AbortController();
    let stoppedAt: number | null = null;
    const outcome = await runTasks({
      context: {
        ...context,
        workspaces: quota.provider,
        workspaceQuota: quota,
        onEvent: (event) => {
          context.onEvent?.(event);
          // SIGTERM arrives just after the second worker's claim, in the middle of admitting more.
          if (stoppedAt === null && seen.filter((each) => each.type === 'task.claimed' && each.data.kind === 'worker').length === 2) {
            stoppedAt = seen.length;
            controller.abort();
          }
        },
      },
      holder: 'runner-1',
      workers: () => 9,
      leaseMs: 30_000,
      rootTaskId: root.id,
      signal: controller.signal,
    });

    expect(outcome.rootHandoff).toBeNull();
    expect(stoppedAt).not.toBeNull();
    expect(seen.slice(stoppedAt ?? 0).filter((event) => event.type === 'task.claimed')).toEqual([]);
    const workers = (await tasks.listTasks('run-1')).filter((task) => task.kind === 'worker');
    expect(workers).toHaveLength(9);
    expect(workers.map((task) => task.attempt).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 1]);
    expect(workers.every((task) => task.status === 'open' && task.leaseHolder === null)).toBe(true);
  }, 60_000);

  it("records the user's release made while it admits workers before the claims it allows, never after", async () => {
    const { context, root, seen } = await setUp(scriptedPlanner(() => ({ text: 'Waiting.' })), simModel('sim?latency=300'));
    await publishWorkers(root.id, 3, [PAD_TASK]);
    const record = (body: EventBody) => context.onEvent?.(context.events.append({ ...body, runId: 'run-1', agentId: 'system' }));
    const steering = createSteeringRecorder({ events: context.events, tasks, runId: 'run-1', record });
    // The user held the run from another terminal before it started.
    await tasks.setRunAndon('run-1', true, 'reviewing main', Date.now());
    const quota = createWorkspaceQuota({ provider: context.workspaces, capBytes: Number.MAX_SAFE_INTEGER, record: () => undefined });
    let released = false;
    const controller = new AbortController();
    const outcome = await runTasks({
      context: {
        ...context,
        steering,
        workspaces: quota.provider,
        // The user releases it while the runner measures the workspaces before claiming a worker.
        workspaceQuota: {
          ...quota,
          admit: async (runningWorkers) => {
            const admitted = await quota.admit(runningWorkers);
            if (!released) await tasks.setRunAndon('run-1', false, 'looks fine', Date.now());
            released = true;
            return admitted;
          },
        },
        onEvent: (event) => {
          context.onEvent?.(event);
          if (seen.filter((each) => each.type === 'task.claimed' && each.data.kind === 'worker').length === 2) controller.abort();
        },
      },
      holder: 'runner-1',
      workers: () => 3,
      leaseMs: 30_000,
      rootTaskId: root.id,
      signal: controller.signal,
    });

    expect(outcome.failure).toBeNull();
    const order = seen.flatMap((event) => (event.type === 'andon.changed' ? [`andon:${event.data.paused}`] : event.type === 'task.claimed' ? [`claimed:${event.data.kind}`] : []));
    expect(order.slice(0, 3)).toEqual(['andon:true', 'andon:false', order[2]]);
    expect(order.slice(2).every((entry) => entry.startsWith('claimed:'))).toBe(true);
    expect(order.filter((entry) => entry === 'claimed:worker')).toHaveLength(2);
  }, 60_000);

  it('holds new workers back while their workspaces would pass the disk cap, and runs them once space is freed', async () => {
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) {
        return {
          calls: [
            { name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } },
            { name: 'create_task', input: { title: 'Build case', brief: CASE_TASK } },
            { name: 'create_task', input: { title: 'Build slug', brief: SLUG_TASK } },
          ],
        };
      }
      const handoffs = request.messages.filter((message) => message.role === 'user' && message.content.startsWith('Handoff from task')).length;
      return handoffs >= 3 ? { calls: [{ name: 'finish', input: { status: 'done', summary: 'all three built' } }] } : { text: 'Waiting.' };
    });
    const { context, root, seen } = await setUp(planner);
    const fresh = await context.workspaces.estimateFreshBytes();
    // Room for one fresh workspace and a half: never two at once.
    const quota = createWorkspaceQuota({
      provider: context.workspaces,
      capBytes: Math.floor(fresh * 1.5),
      record: (body) => context.onEvent?.(context.events.append({ ...body, runId: 'run-1', agentId: 'system' })),
    });
    const outcome = await runTasks({
      context: { ...context, workspaces: quota.provider, workspaceQuota: quota },
      holder: 'runner-1',
      workers: () => 3,
      leaseMs: 30_000,
      rootTaskId: root.id,
      signal: new AbortController().signal,
    });

    expect(outcome.rootHandoff?.status).toBe('done');
    const reached = seen.filter((event) => event.type === 'workspace.quota-reached');
    expect(reached.length).toBeGreaterThan(0);
    expect(reached[0]).toMatchObject({ data: { capBytes: Math.floor(fresh * 1.5), runningWorkers: 1 } });
    let live = 0;
    let peak = 0;
    for (const event of seen) {
      if (event.type === 'workspace.created') live += 1;
      if (event.type === 'workspace.removed') live -= 1;
      peak = Math.max(peak, live);
    }
    expect(peak).toBe(1);
    expect(seen.filter((event) => event.type === 'workspace.created')).toHaveLength(3);
    expect(example.git('show', 'main:src/index.js')).toMatch(/pad\.js[\s\S]*case\.js|case\.js[\s\S]*pad\.js/);
  }, 120_000);
});
