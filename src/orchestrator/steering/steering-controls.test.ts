import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../events/event-types.js';
import { runSettingsFixture } from '../../events/testing/run-settings-fixture.js';
import type { EventStore } from '../../store/events/event-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import { handoffOf } from '../../store/testing/task-store-fixtures.js';
import type { NewTask, TaskStore } from '../../store/tasks/task-store.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { createRunControls, workerLimitFromLog, type RunControls } from './run-controls.js';
import { RUNNER_WAKEUP } from '../wakeups.js';
import { listAgentsAtWork, MAX_WORKERS, setWorkers, stopAgent } from './steering-controls.js';
import { createSteeringRecorder } from './steering-record.js';
import type { SteeringStores } from './steering.js';
import type { UserStop } from './user-stop.js';

const RUN = 'run-1';

const SETTINGS = runSettingsFixture();

function task(id: string, parentTaskId: string | null, kind: NewTask['kind'], title: string): NewTask {
  return { id, runId: RUN, parentTaskId, createdBy: null, kind, title, body: title, scope: kind === 'planner' && parentTaskId !== null ? `src/${id}/` : null, retryOf: null };
}

describe('changing the worker limit and stopping agents', () => {
  let dir: string;
  let events: EventStore;
  let tasks: TaskStore;
  let woken: string[];
  let stopped: UserStop[];
  let controls: RunControls;

  /** The stores as the run's own process uses them: its recorder acts on what it records. */
  const runProcess = (): SteeringStores => {
    const { record } = createAgentRecorder(events, RUN, 'system');
    return { events, tasks, writer: createSteeringRecorder({ events, tasks, runId: RUN, record, wake: (key) => woken.push(key), effects: controls.effects }) };
  };
  const controlEvents = (): Promise<ColonyEvent[]> => events.read({ runId: RUN, types: ['workers.changed', 'agent.stop-requested'] });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-controls-'));
    events = openSqliteEventStore(join(dir, 'colony.db'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
    woken = [];
    stopped = [];
    controls = createRunControls(SETTINGS.workers);
    controls.stops.attach((stop) => stopped.push(stop));
    events.append({ type: 'run.configured', runId: RUN, agentId: 'system', data: { settings: SETTINGS } });
    await tasks.createTask(task('task-root', null, 'planner', 'Toolbox'), 1);
    await tasks.createTask(task('task-lib', 'task-root', 'planner', 'Build src/lib/'), 2);
    await tasks.createTask(task('task-pad', 'task-lib', 'worker', 'Build pad'), 3);
    await tasks.createTask(task('task-old', 'task-root', 'worker', 'Build old'), 4);
    await tasks.createTask(task('task-later', 'task-lib', 'worker', 'Build later'), 5);
    for (const [agentId, taskId, role] of [
      ['planner-root', 'task-root', 'root-planner'],
      ['planner-lib', 'task-lib', 'sub-planner'],
      ['worker-pad', 'task-pad', 'worker'],
      ['worker-old', 'task-old', 'worker'],
    ] as const) {
      events.append({ type: 'agent.started', runId: RUN, agentId, data: { role, taskId, title: taskId, model: 'sim', systemPrompt: '', task: '', tools: [] } });
    }
    // The root, the sub-planner, pad and old are claimed; old has finished; later waits to be claimed.
    for (const kinds of [['planner'], ['planner'], ['worker'], ['worker']] as const) await tasks.claim({ runId: RUN, holder: 'runner', kinds, now: 10, leaseMs: 60_000 });
    expect((await tasks.complete('task-old', { holder: 'runner', attempt: 1 }, handoffOf('done', 'Old built.'), 20)).ok).toBe(true);
  });

  afterEach(async () => {
    await tasks.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sets the worker limit: recorded once with the one before, the runner told and woken; the same number changes nothing', async () => {
    const stores = runProcess();
    expect(await setWorkers(stores, RUN, 1, 'the machine is busy', 100)).toMatchObject({ ok: true, workers: 1, previous: 4, request: { kind: 'workers', workers: 1 } });
    expect(controls.workers()).toBe(1);
    expect(woken).toEqual([RUNNER_WAKEUP]);
    expect(await setWorkers(stores, RUN, 1, 'again', 101)).toEqual({ ok: true, workers: 1, previous: 1, request: null });
    expect(await setWorkers(stores, RUN, MAX_WORKERS, 'all of them', 102)).toMatchObject({ ok: true, workers: MAX_WORKERS, previous: 1 });
    expect(controls.workers()).toBe(MAX_WORKERS);
    expect((await controlEvents()).map((event) => event.type === 'workers.changed' && event.data)).toEqual([
      { workers: 1, previous: 4, by: 'user', requestSeq: 1 },
      { workers: MAX_WORKERS, previous: 1, by: 'user', requestSeq: 2 },
    ]);
    // A resumed run goes on with the latest limit in the log, not the one it was started with.
    expect(await workerLimitFromLog(events, RUN, SETTINGS.workers)).toBe(MAX_WORKERS);
  });

  it('refuses a worker limit that is not a whole number from 1 to 256, and a run that is not there', async () => {
    const stores = runProcess();
    for (const workers of [0, -2, 1.5, Number.NaN, MAX_WORKERS + 1]) {
      const refused = await setWorkers(stores, RUN, workers, 'bad', 100);
      expect(!refused.ok && refused.error).toBe(
        `the worker limit must be a whole number from 1 to 256, got ${String(workers)}: say how many workers may run at once, e.g. colony workers 2. To let none start for a while, hold the run with colony andon.`,
      );
    }
    expect(await setWorkers(stores, 'run-9', 2, 'x')).toEqual({ ok: false, error: 'there is no run run-9 in this state directory to set the workers of.' });
    expect(await tasks.runRequests(RUN, 0)).toEqual([]);
    expect(controls.workers()).toBe(SETTINGS.workers);
  });

  it('stops a worker by its agent id and a sub-planner by its task id: recorded with the agent, handed to the runner once', async () => {
    const stores = runProcess();
    const worker = await stopAgent(stores, RUN, 'worker-pad', 'it went the wrong way', 100);
    expect(worker).toMatchObject({ ok: true, agent: { taskId: 'task-pad', agentId: 'worker-pad', role: 'worker', title: 'Build pad' }, request: { kind: 'stop', taskId: 'task-pad' }, repeated: false });
    expect(await stopAgent(stores, RUN, 'task-pad', 'again', 101)).toMatchObject({ ok: true, repeated: true, request: { reason: 'it went the wrong way' } });
    expect(await stopAgent(stores, RUN, 'task-lib', 'wrong slice', 102)).toMatchObject({ ok: true, agent: { agentId: 'planner-lib', role: 'sub-planner' }, repeated: false });
    expect(stopped).toEqual([
      { kind: 'user-stop', taskId: 'task-pad', reason: 'it went the wrong way', requestSeq: 1 },
      { kind: 'user-stop', taskId: 'task-lib', reason: 'wrong slice', requestSeq: 2 },
    ]);
    expect((await controlEvents()).map((event) => event.type === 'agent.stop-requested' && event.data)).toEqual([
      { taskId: 'task-pad', stoppedAgentId: 'worker-pad', reason: 'it went the wrong way', requestSeq: 1 },
      { taskId: 'task-lib', stoppedAgentId: 'planner-lib', reason: 'wrong slice', requestSeq: 2 },
    ]);
  });

  it('refuses the root planner, a finished task, one not claimed yet, an unknown id and no id, saying what to do', async () => {
    const stores = runProcess();
    for (const root of ['planner-root', 'task-root']) {
      const refused = await stopAgent(stores, RUN, root, 'x');
      expect(!refused.ok && refused.error).toBe(
        `${root} is the root planner (task task-root): it is the run itself, so it is not stopped alone. Stop the run with Ctrl-C in its terminal (colony resume takes it up again), or hold it with colony andon (no new task starts until colony andon --release).`,
      );
    }
    const atWork = 'Stop one of the agents at work, by task id or agent id:\n  task-lib  planner-lib  sub-planner  "Build src/lib/"\n  task-pad  worker-pad  worker  "Build pad"';
    const finished = await stopAgent(stores, RUN, 'worker-old', 'x');
    expect(!finished.ok && finished.error).toBe(`task task-old "Build old" has finished (done): no agent works on it any more. ${atWork}`);
    const waiting = await stopAgent(stores, RUN, 'task-later', 'x');
    expect(!waiting.ok && waiting.error).toBe(
      'task task-later "Build later" has not started: it waits to be claimed, so no agent works on it yet. Stop it once colony status shows it running, or hold the run with colony andon so nothing new starts.',
    );
    const unknown = await stopAgent(stores, RUN, 'worker-nope', 'x');
    expect(!unknown.ok && unknown.error).toBe(`run run-1 has no task or agent worker-nope. ${atWork}`);
    const empty = await stopAgent(stores, RUN, '  ', 'x');
    expect(!empty.ok && empty.error).toBe(`say which agent to stop, by its task id or agent id: colony stop <id>. ${atWork}`);
    expect(await stopAgent(stores, 'run-9', 'worker-pad', 'x')).toEqual({ ok: false, error: 'there is no run run-9 in this state directory, so there is no agent to stop.' });
    expect(await tasks.runRequests(RUN, 0)).toEqual([]);
    expect(stopped).toEqual([]);
    expect((await listAgentsAtWork(stores, RUN)).map((agent) => agent.taskId)).toEqual(['task-lib', 'task-pad']);
  });

  it('leaves the record to the process that writes the log: requests from elsewhere are recorded once, in order, after a restart too', async () => {
    const elsewhere: SteeringStores = { events, tasks };
    expect(await setWorkers(elsewhere, RUN, 2, 'fewer', 100)).toMatchObject({ ok: true, previous: 4 });
    expect((await stopAgent(elsewhere, RUN, 'worker-pad', 'wrong way', 101)).ok).toBe(true);
    // The limit as the store has it, before the log records it.
    expect(await setWorkers(elsewhere, RUN, 3, 'a few more', 102)).toMatchObject({ ok: true, previous: 2 });
    expect(await controlEvents()).toEqual([]);
    await runProcess().writer?.recordSteering();
    await runProcess().writer?.recordSteering();
    expect((await controlEvents()).map((event) => [event.type, event.data])).toEqual([
      ['workers.changed', { workers: 2, previous: 4, by: 'user', requestSeq: 1 }],
      ['agent.stop-requested', { taskId: 'task-pad', stoppedAgentId: 'worker-pad', reason: 'wrong way', requestSeq: 2 }],
      ['workers.changed', { workers: 3, previous: 2, by: 'user', requestSeq: 3 }],
    ]);
    expect(controls.workers()).toBe(3);
    expect(stopped.map((stop) => stop.taskId)).toEqual(['task-pad']);
  });
});
