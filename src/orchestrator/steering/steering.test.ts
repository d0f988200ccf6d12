import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import { handoffOf } from '../../store/testing/task-store-fixtures.js';
import type { NewTask, TaskStore } from '../../store/tasks/task-store.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { RUNNER_WAKEUP } from '../wakeups.js';
import { createSteeringRecorder, type SteeringWriter } from './steering-record.js';
import { pullRunAndon, listPlanners, releaseRunAndon, sendToPlanner, type SteeringStores } from './steering.js';

const RUN = 'run-1';

function task(id: string, parentTaskId: string | null, kind: NewTask['kind'], title: string): NewTask {
  return { id, runId: RUN, parentTaskId, createdBy: null, kind, title, body: title, scope: kind === 'planner' && parentTaskId !== null ? 'src/lib/' : null, retryOf: null };
}

describe('steering a run', () => {
  let dir: string;
  let events: EventStore;
  let tasks: TaskStore;
  let woken: string[];

  /** The stores as a process that writes the run's log uses them. */
  const writerFor = (): SteeringWriter => {
    const { record } = createAgentRecorder(events, RUN, 'system');
    return createSteeringRecorder({ events, tasks, runId: RUN, record, wake: (key) => woken.push(key) });
  };
  const steeringEvents = (): Promise<ColonyEvent[]> => events.read({ runId: RUN, types: ['message.sent', 'andon.changed'] });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-steering-'));
    events = openSqliteEventStore(join(dir, 'colony.db'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
    woken = [];
    await tasks.createTask(task('task-root', null, 'planner', 'Toolbox'), 1);
    await tasks.createTask(task('task-lib', 'task-root', 'planner', 'Build src/lib/'), 2);
    await tasks.createTask(task('task-pad', 'task-lib', 'worker', 'Build pad'), 3);
    await tasks.createTask(task('task-old', 'task-root', 'planner', 'Build src/old/'), 4);
    for (const [agentId, taskId, role] of [
      ['planner-root', 'task-root', 'root-planner'],
      ['planner-lib', 'task-lib', 'sub-planner'],
      ['worker-pad', 'task-pad', 'worker'],
      ['planner-old', 'task-old', 'sub-planner'],
    ] as const) {
      events.append({ type: 'agent.started', runId: RUN, agentId, data: { role, taskId, title: taskId, model: 'sim', systemPrompt: '', task: '', tools: [] } });
    }
    const claimed = await tasks.claim({ runId: RUN, holder: 'runner', kinds: ['planner'], now: 10, leaseMs: 60_000 });
    expect(claimed?.id).toBe('task-root');
    for (let next = await tasks.claim({ runId: RUN, holder: 'runner', kinds: ['planner'], now: 10, leaseMs: 60_000 }); next !== null; next = await tasks.claim({ runId: RUN, holder: 'runner', kinds: ['planner'], now: 10, leaseMs: 60_000 })) {
      if (next.id === 'task-old') await tasks.complete('task-old', { holder: 'runner', attempt: 1 }, handoffOf('done', 'Old built.'), 20);
    }
  });

  afterEach(async () => {
    await tasks.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a message for the root planner, or a planner named by task id or agent id, and records it as sent', async () => {
    const stores: SteeringStores = { events, tasks, writer: writerFor() };
    expect(await sendToPlanner(stores, RUN, null, 'Parser first.', 100)).toMatchObject({ ok: true, recipient: { taskId: 'task-root', agentId: 'planner-root', role: 'root-planner' } });
    expect(await sendToPlanner(stores, RUN, 'task-lib', 'Skip the docs.', 101)).toMatchObject({ ok: true, recipient: { taskId: 'task-lib', agentId: 'planner-lib', role: 'sub-planner' } });
    const byAgent = await sendToPlanner(stores, RUN, 'planner-lib', 'And the tests.', 102);
    expect(byAgent).toMatchObject({ ok: true, recipient: { taskId: 'task-lib' } });
    expect((await tasks.takeInbox('task-lib')).map((message) => message.text)).toEqual(['Skip the docs.', 'And the tests.']);
    expect((await steeringEvents()).map((event) => event.type === 'message.sent' && [event.data.recipientTaskId, event.data.text])).toEqual([
      ['task-root', 'Parser first.'],
      ['task-lib', 'Skip the docs.'],
      ['task-lib', 'And the tests.'],
    ]);
    expect(woken).toEqual(['task-root', 'task-lib', 'task-lib']);
  });

  it('refuses a worker, a finished planner, an unknown id and an empty message, saying what to do', async () => {
    const stores: SteeringStores = { events, tasks };
    const worker = await sendToPlanner(stores, RUN, 'worker-pad', 'Hurry.');
    expect(worker).toEqual({
      ok: false,
      error: 'worker-pad is the worker task task-pad "Build pad": workers take no messages, they know only their task. Tell its planner instead: colony say "…" --to task-lib (agent planner-lib).',
    });
    const finished = await sendToPlanner(stores, RUN, 'task-old', 'More.');
    expect(finished.ok).toBe(false);
    expect(!finished.ok && finished.error).toMatch(/^the planner of task task-old "Build src\/old\/" has finished \(done\) and reads no more messages\. Send to one of the planners at work/);
    const unknown = await sendToPlanner(stores, RUN, 'planner-nope', 'Hello.');
    expect(!unknown.ok && unknown.error).toBe(
      'run run-1 has no task or agent planner-nope. Send to one of the planners at work, by task id or agent id (--to), or leave --to out for the root planner:\n' +
        '  task-root  planner-root  root-planner  "Toolbox"\n  task-lib  planner-lib  sub-planner  "Build src/lib/"',
    );
    expect((await sendToPlanner(stores, RUN, null, '  ')).ok).toBe(false);
    expect(await sendToPlanner(stores, 'run-9', null, 'Hi.')).toEqual({ ok: false, error: 'run run-9 has no root planner in this state directory, so there is no planner to tell.' });
    expect(await tasks.personMessages(RUN, 0)).toEqual([]);
    expect((await listPlanners(stores, RUN)).map((planner) => planner.taskId)).toEqual(['task-root', 'task-lib']);
  });

  it('holds and releases the run, each change recorded once as the user’s, the release waking the runner', async () => {
    const stores: SteeringStores = { events, tasks, writer: writerFor() };
    const held = await pullRunAndon(stores, RUN, 'reviewing main', 100);
    expect(held).toMatchObject({ ok: true, andon: { paused: true, reason: 'reviewing main' }, change: { paused: true } });
    expect(await pullRunAndon(stores, RUN, 'reviewing main', 101)).toMatchObject({ ok: true, change: null });
    expect(await tasks.claim({ runId: RUN, holder: 'runner', kinds: ['worker', 'planner'], now: 200, leaseMs: 1_000 })).toBeNull();
    expect(await releaseRunAndon(stores, RUN, 'looks fine', 300)).toMatchObject({ ok: true, change: { paused: false, reason: 'looks fine' } });
    expect(await releaseRunAndon(stores, RUN, 'again', 301)).toEqual({ ok: true, change: null });
    expect((await tasks.claim({ runId: RUN, holder: 'runner', kinds: ['worker'], now: 400, leaseMs: 1_000 }))?.id).toBe('task-pad');
    expect((await steeringEvents()).map((event) => event.type === 'andon.changed' && event.data)).toEqual([
      { taskId: null, paused: true, reason: 'reviewing main', by: 'user', andonSeq: 1 },
      { taskId: null, paused: false, reason: 'looks fine', by: 'user', andonSeq: 2 },
    ]);
    expect(woken).toEqual([RUNNER_WAKEUP]);
    expect((await pullRunAndon(stores, 'run-9', 'x')).ok).toBe(false);
  });

  it('leaves the record to the process that writes the log: it records what others did once, in order, after a restart too', async () => {
    // Another process (no writer) holds the run and leaves two messages.
    const elsewhere: SteeringStores = { events, tasks };
    await sendToPlanner(elsewhere, RUN, null, 'One.', 100);
    await pullRunAndon(elsewhere, RUN, 'wait', 101);
    expect(await steeringEvents()).toEqual([]);
    const writer = writerFor();
    expect(await writer.recordedAndonSeq()).toBe(0);
    await writer.recordSteering();
    await writer.recordSteering();
    expect(await writer.recordedAndonSeq()).toBe((await tasks.runAndon(RUN))?.seq);
    // A restarted process knows the andon its log has before it records anything.
    expect(await writerFor().recordedAndonSeq()).toBe((await tasks.runAndon(RUN))?.seq);
    await sendToPlanner(elsewhere, RUN, 'task-lib', 'Two.', 102);
    // A restarted process reads what was recorded from the log and records only the rest.
    await writerFor().recordSteering();
    await writerFor().recordSteering();
    expect((await steeringEvents()).map((event) => event.type)).toEqual(['message.sent', 'andon.changed', 'message.sent']);
    expect((await steeringEvents()).map((event) => (event.type === 'message.sent' ? event.data.text : event.type === 'andon.changed' ? event.data.reason : ''))).toEqual(['One.', 'wait', 'Two.']);
  });

  it('records what others did once when the runner and a planner ask at the same moment', async () => {
    const elsewhere: SteeringStores = { events, tasks };
    await sendToPlanner(elsewhere, RUN, null, 'One.', 100);
    await pullRunAndon(elsewhere, RUN, 'wait', 101);
    const writer = writerFor();
    // Neither waits for the other: each would read the same rows above the same marks.
    await Promise.all([writer.recordSteering(), writer.recordSteering(), writer.recordedAndonSeq()]);
    expect((await steeringEvents()).map((event) => event.type)).toEqual(['message.sent', 'andon.changed']);
    expect(woken).toEqual(['task-root']);
  });
});
