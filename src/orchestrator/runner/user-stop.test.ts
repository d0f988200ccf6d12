import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/event-types.js';
import type { ChatModel, ModelRequest } from '../../model/chat-model.js';
import type { TaskRecord, TaskStore } from '../../store/tasks/task-store.js';
import { type ExampleRepository } from '../../../test/testing/example-repository.js';
import { openTestRun, scriptedPlanner, simModel, type PlannerAnswer, type TestRun } from '../../../test/testing/test-run.js';
import { createAgentRecorder } from '../agent-recorder.js';
import type { RunContext } from '../context/run-context.js';
import { createRunControls, type RunControls } from '../steering/run-controls.js';
import { stopAgent } from '../steering/steering-controls.js';
import { createSteeringRecorder } from '../steering/steering-record.js';
import type { SteeringStores } from '../steering/steering.js';
import { runTasks, type RunnerOutcome } from './task-runner.js';

const PAD_TASK = readFileSync(new URL('../../../examples/text-kit/tasks/01-pad.md', import.meta.url), 'utf8');
const RUN = 'run-1';
/** What only the sub-planner's brief says, to tell its model calls from the root planner's. */
const SLICE = 'Own the text slice of the toolbox.';

/** What the planner was told since its last answer (a handoff may come with a notice after it). */
function lastUserText(request: ModelRequest): string {
  const since = request.messages.slice(request.messages.findLastIndex((message) => message.role === 'assistant') + 1);
  return since.flatMap((message) => (message.role === 'user' ? [message.content] : [])).join('\n');
}

/** The summary of the handoff a planner's request ends with. */
function heardSummary(request: ModelRequest): string {
  return lastUserText(request).split('\n').find((line) => line.startsWith('summary: '))?.slice('summary: '.length) ?? '';
}

function ofType<Type extends RecordedEvent['type']>(events: readonly RecordedEvent[], type: Type): Extract<RecordedEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<RecordedEvent, { type: Type }> => event.type === type);
}

/** A planner model whose answers may wait (the script is asked only once `before` resolves). */
function plannerWaitingFor(before: (request: ModelRequest) => Promise<void>, script: (request: ModelRequest, index: number) => PlannerAnswer): ChatModel & { requests: ModelRequest[] } {
  const inner = scriptedPlanner(script);
  return {
    spec: inner.spec,
    requests: inner.requests,
    async call(request, options) {
      await before(request);
      return inner.call(request, options);
    },
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the user's stop of one agent", () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  /** A run whose process records and acts on people's requests, as `colony run` does. */
  async function setUp(plannerModel: ChatModel, workerModel: ChatModel = simModel()): Promise<TestRun & { controls: RunControls; run: () => Promise<RunnerOutcome>; ownStores: SteeringStores }> {
    const opened = await openTestRun(plannerModel, workerModel);
    ({ example, tasks } = opened);
    const controls = createRunControls(2);
    const { record } = createAgentRecorder(opened.context.events, RUN, 'system', opened.context.onEvent);
    const writer = createSteeringRecorder({ events: opened.context.events, tasks, runId: RUN, record, wake: (key) => opened.context.wakeups.wake(key), effects: controls.effects });
    const context: RunContext = { ...opened.context, steering: writer };
    const run = () => runTasks({ context, holder: 'runner-1', workers: controls.workers, userStops: controls.stops, leaseMs: 30_000, rootTaskId: opened.root.id, signal: new AbortController().signal });
    return { ...opened, context, controls, run, ownStores: { events: context.events, tasks, writer } };
  }

  it('stops a running worker from another process: its task closes failed, saying the user stopped it and why, and its planner hears it', async () => {
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }] };
      return { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${heardSummary(request)}` } }] };
    });
    // Every worker call after the first never answers: the worker is busy until it is stopped.
    const { context, root, seen, run } = await setUp(planner, simModel('sim?stall=1'));
    const running = run();
    await until(() => seen.some((event) => event.type === 'agent.started' && event.data.role === 'worker'), 'the worker to start');
    const worker = ofType(seen, 'agent.started').find((event) => event.data.role === 'worker');
    // Another process writes the task store only; the run's process records and acts on it.
    const stopped = await stopAgent({ events: context.events, tasks }, RUN, worker?.agentId ?? '', 'it went the wrong way');
    expect(stopped).toMatchObject({ ok: true, agent: { role: 'worker', title: 'Build pad' } });
    const outcome = await running;

    const child = (await tasks.listChildren(root.id))[0];
    expect(child?.status).toBe('failed');
    expect(child?.handoff).toMatchObject({ status: 'failed', synthetic: true, summary: 'The worker was stopped by the user: it went the wrong way' });
    // What the worker's own ending said is kept after it.
    expect(child?.handoff?.notes[0]).toMatch(/^The worker ended without a handoff/);
    expect(child?.handoff?.notes.join('\n')).toContain('stopped: the user stopped it: it went the wrong way');
    expect(ofType(seen, 'agent.stop-requested').map((event) => event.data)).toEqual([
      { taskId: child?.id, stoppedAgentId: worker?.agentId, reason: 'it went the wrong way', requestSeq: 1 },
    ]);
    expect(ofType(seen, 'handoff.delivered').map((event) => event.data)).toContainEqual({ taskId: child?.id, parentTaskId: root.id, status: 'failed' });
    expect(ofType(seen, 'agent.hung')).toEqual([]);
    expect(outcome.rootHandoff?.summary).toBe('heard: The worker was stopped by the user: it went the wrong way');
  });

  it('stops a worker whose stop is recorded while the runner asks the store whether it was stopped before it started', async () => {
    const planner = scriptedPlanner((request, index) => {
      if (index === 0) return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }] };
      return { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${heardSummary(request)}` } }] };
    });
    const { context, controls, root, ownStores } = await setUp(planner);
    let stopped = false;
    // The user's stop lands, in this process, between the runner's read of the requests and its answer.
    const asked = new Proxy(tasks, {
      get(target, key) {
        if (key === 'runRequests') {
          return async (runId: string, afterSeq: number) => {
            const requests = await target.runRequests(runId, afterSeq);
            const worker = (await target.listTasks(runId)).find((task) => task.kind === 'worker' && task.status === 'running');
            if (!stopped && worker !== undefined) {
              stopped = true;
              expect(await stopAgent(ownStores, RUN, worker.id, 'changed my mind')).toMatchObject({ ok: true, agent: { agentId: null } });
            }
            return requests;
          };
        }
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const outcome = await runTasks({ context: { ...context, tasks: asked }, holder: 'runner-1', workers: controls.workers, userStops: controls.stops, leaseMs: 30_000, rootTaskId: root.id, signal: new AbortController().signal });

    expect(stopped).toBe(true);
    const child = (await tasks.listChildren(root.id))[0];
    expect(child?.handoff).toMatchObject({ status: 'failed', synthetic: true, summary: 'The worker was stopped by the user: changed my mind' });
    expect(outcome.rootHandoff?.summary).toBe('heard: The worker was stopped by the user: changed my mind');
  });

  it('delivers the handoff a worker submitted before the stop came, with its own status', async () => {
    const planner = scriptedPlanner((request, index) => {
      // The acceptance command outlasts the stop: the worker has handed off, colony is still checking.
      if (index === 0) return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK, acceptance: ['sleep 2'] } }] };
      return { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${heardSummary(request)}` } }] };
    });
    const { context, root, seen, run } = await setUp(planner);
    const running = run();
    await until(() => seen.some((event) => event.type === 'acceptance.started'), 'the acceptance checks to start');
    const worker = ofType(seen, 'agent.started').find((event) => event.data.role === 'worker');
    expect(await stopAgent({ events: context.events, tasks }, RUN, worker?.agentId ?? '', 'too late')).toMatchObject({ ok: true });
    await running;

    const child = (await tasks.listChildren(root.id))[0];
    const submitted = ofType(seen, 'handoff.submitted').find((event) => event.agentId === worker?.agentId);
    expect(submitted?.data.handoff.status).toBe('done');
    expect(child?.handoff).toMatchObject({ status: 'done', synthetic: false, summary: submitted?.data.handoff.summary });
    expect(ofType(seen, 'handoff.delivered').find((event) => event.data.taskId === child?.id)?.data.status).toBe('done');
  });

  it('closes a task whose stop was asked for while no agent ran it, when the run claims it again, without starting an agent', async () => {
    const planner = scriptedPlanner((request) =>
      lastUserText(request).includes('Handoff from task') ? { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${heardSummary(request)}` } }] } : { text: 'Waiting.' },
    );
    const { root, seen, run, context } = await setUp(planner);
    // A worker of an earlier life of the run had the task; the run stopped and gave it back.
    await tasks.createTask({ id: 'task-pad', runId: RUN, parentTaskId: root.id, createdBy: null, kind: 'worker', title: 'Build pad', body: PAD_TASK, scope: null, retryOf: null }, Date.now());
    expect((await tasks.claim({ runId: RUN, holder: 'runner-gone', kinds: ['worker'], now: Date.now(), leaseMs: 30_000 }))?.id).toBe('task-pad');
    await tasks.releaseAbandoned(RUN, Date.now());
    expect(await stopAgent({ events: context.events, tasks }, RUN, 'task-pad', 'not needed any more')).toMatchObject({ ok: true, agent: { agentId: null } });
    const outcome = await run();

    expect(await tasks.getTask('task-pad')).toMatchObject({ status: 'failed', handoff: { summary: 'The worker was stopped by the user: not needed any more', notes: ['No agent had started on it.'] } });
    expect(ofType(seen, 'agent.started').map((event) => event.data.role)).toEqual(['root-planner']);
    expect(ofType(seen, 'task.claimed').map((event) => event.data.taskId)).toContain('task-pad');
    expect(ofType(seen, 'agent.stop-requested').map((event) => event.data)).toEqual([{ taskId: 'task-pad', stoppedAgentId: null, reason: 'not needed any more', requestSeq: 1 }]);
    expect(outcome.rootHandoff?.summary).toBe('heard: The worker was stopped by the user: not needed any more');
  });

  it('stops a sub-planner: its andon is lifted, the task it published goes on to its end, and its planner hears which tasks go on', async () => {
    let subTask: TaskRecord | undefined;
    let padAtRootsTurn: TaskRecord | null = null;
    /** The stores as the run's own process holds them, once it started. */
    const own: { stores?: SteeringStores } = {};
    const isSub = (request: ModelRequest) => request.messages.some((message) => message.role === 'user' && message.content.includes(SLICE));
    let subCalls = 0;
    const planner = plannerWaitingFor(
      async (request) => {
        if (isSub(request)) {
          subCalls += 1;
          if (subCalls === 1) return;
          // Nudged over the work its andon holds back: the user stops it here, in the run's own process.
          subTask = (await tasks.listTasks(RUN)).find((task) => task.kind === 'planner' && task.parentTaskId !== null);
          if (own.stores === undefined) throw new Error('the run has not started');
          expect(await stopAgent(own.stores, RUN, subTask?.id ?? '', 'wrong slice')).toMatchObject({ ok: true, agent: { role: 'sub-planner' } });
          return;
        }
        // The root planner hears of the stop first, then waits for the task below the stopped planner to end.
        if (lastUserText(request).includes('Handoff from task')) {
          const pad = async () => (await tasks.listChildren(subTask?.id ?? ''))[0];
          await until(async () => (await pad())?.status === 'done', 'the task below the stopped sub-planner to end');
          padAtRootsTurn = (await pad()) ?? null;
        }
      },
      (request, index) => {
        if (isSub(request)) {
          if (subCalls === 1) {
            return { calls: [{ name: 'andon', input: { paused: true, reason: 'main first' } }, { name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK } }] };
          }
          return { text: 'Waiting.' };
        }
        if (index === 0) return { calls: [{ name: 'delegate', input: { title: 'Text', scope: 'src/text/', brief: `${SLICE}\n\n${PAD_TASK}` } }] };
        return { calls: [{ name: 'finish', input: { status: 'done', summary: `heard: ${heardSummary(request)}` } }] };
      },
    );
    const opened = await setUp(planner);
    own.stores = opened.ownStores;
    const outcome = await opened.run();

    const sub = await tasks.getTask(subTask?.id ?? '');
    const pad = (await tasks.listChildren(subTask?.id ?? ''))[0];
    expect(sub?.handoff).toMatchObject({ status: 'failed', summary: 'The sub-planner was stopped by the user: wrong slice' });
    expect(sub?.handoff?.notes).toContain(`It published task ${pad?.id} (Build pad): open`);
    expect(sub?.handoff?.concerns).toContain(
      `1 task(s) it published are still open or running (${pad?.id}): they go on to their end, but their handoffs reach no planner. Do not publish them again; the user can stop them too with colony stop.`,
    );
    // Nothing else would ever have released the andon of a planner that is gone.
    const lifted = ofType(opened.seen, 'andon.changed').find((event) => !event.data.paused);
    expect(lifted?.data).toMatchObject({ taskId: sub?.id, by: 'user' });
    // Recorded by this process, so in the order of the log.
    const claimedPad = opened.seen.findIndex((event) => event.type === 'task.claimed' && event.data.taskId === pad?.id);
    expect(claimedPad).toBeGreaterThan(opened.seen.findIndex((event) => event === lifted));
    expect(padAtRootsTurn).toMatchObject({ status: 'done' });
    expect((await tasks.deliveredHandoffs(RUN)).map((message) => [message.fromTaskId, message.recipientTaskId])).toContainEqual([pad?.id, sub?.id]);
    expect(outcome.rootHandoff?.summary).toBe('heard: The sub-planner was stopped by the user: wrong slice');
  });
});
