import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../events/event-types.js';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { EventStore } from '../../store/events/event-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { createGoalWatch, type GoalWatch } from './goal-watch.js';
import { createSteeringRecorder } from './steering-record.js';

const RUN = 'run-1';
const ROOT = 'task-root';
const GOAL = '# Toolbox\n\n- build pad\n- build case\n';

describe('the goal watch', () => {
  let dir: string;
  let goalPath: string;
  let events: EventStore;
  let tasks: TaskStore;
  let woken: string[];

  const open = (): void => {
    events = openSqliteEventStore(join(dir, 'colony.db'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
  };
  const close = async (): Promise<void> => {
    await tasks.close();
    await events.close();
  };

  /** A watch as a run (or a resumed one) starts it, on the stores open now. */
  const startWatch = (redact: (text: string) => string = (text) => text): GoalWatch => {
    const { record } = createAgentRecorder(events, RUN, 'system');
    const steering = createSteeringRecorder({ events, tasks, runId: RUN, record, wake: (key) => woken.push(key) });
    return createGoalWatch({ path: goalPath, runId: RUN, rootTaskId: ROOT, events, tasks, record, steering, redact, now: () => 1_000 });
  };
  const steeringEvents = (): Promise<ColonyEvent[]> => events.read({ runId: RUN, types: ['goal.changed', 'message.sent'] });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-goal-watch-'));
    goalPath = join(dir, 'GOAL.md');
    writeFileSync(goalPath, GOAL);
    woken = [];
    open();
    await tasks.createTask({ id: ROOT, runId: RUN, parentTaskId: null, createdBy: null, kind: 'planner', title: 'Toolbox', body: GOAL, scope: null, retryOf: null }, 1);
  });

  afterEach(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells the root planner an edit once: goal.changed, then message.sent, the message in its inbox, and wakes it', async () => {
    const watch = startWatch();
    await watch.check();
    expect(await steeringEvents()).toEqual([]);
    writeFileSync(goalPath, `${GOAL}- build trim\n`);
    await watch.check();
    const [changed, sent, ...rest] = await steeringEvents();
    expect(rest).toEqual([]);
    expect(changed).toMatchObject({ type: 'goal.changed', data: { path: goalPath, added: 1, removed: 0, goal: `${GOAL}- build trim\n` } });
    expect(sent).toMatchObject({ type: 'message.sent', data: { recipientTaskId: ROOT } });
    const [message] = await tasks.takeInbox(ROOT);
    expect(message?.text).toContain(`The goal file ${goalPath} was edited while you work: 1 line(s) added, 0 removed.`);
    expect(message?.text).toContain('Added lines (1):\n+ - build trim');
    expect(message?.text).toContain(`----- the goal, as it is now -----\n${GOAL}- build trim\n----- end of the goal -----`);
    expect(sent?.type === 'message.sent' && sent.data.inboxSeq).toBe(message?.seq);
    expect(woken).toEqual([ROOT]);
    // Looked at again, touched without a change, or saved with other line endings: nothing more is told.
    await watch.check();
    utimesSync(goalPath, new Date(), new Date(Date.now() + 5_000));
    await watch.check();
    writeFileSync(goalPath, `${GOAL}- build trim\n`.replace(/\n/g, '\r\n'));
    await watch.check();
    expect(await steeringEvents()).toHaveLength(2);
    expect(await tasks.unreadCount(ROOT)).toBe(0);
  });

  it('records a goal file that is gone, or empty, once, sends nothing, and tells the next real edit', async () => {
    const watch = startWatch();
    rmSync(goalPath);
    await watch.check();
    await watch.check();
    writeFileSync(goalPath, '  \n');
    await watch.check();
    expect((await steeringEvents()).map((event) => event.type === 'goal.changed' && event.data)).toEqual([
      { path: goalPath, added: 0, removed: 0, error: 'the file is gone; the root planner keeps the goal it has' },
    ]);
    expect(await tasks.unreadCount(ROOT)).toBe(0);
    // Back as it was: nothing to tell. Gone again: recorded again. Back edited: told.
    writeFileSync(goalPath, GOAL);
    await watch.check();
    rmSync(goalPath);
    await watch.check();
    writeFileSync(goalPath, '# Toolbox\n\n- build pad\n');
    await watch.check();
    expect((await steeringEvents()).map((event) => (event.type === 'goal.changed' ? (event.data.error ?? `-${event.data.removed}`) : event.type))).toEqual([
      'the file is gone; the root planner keeps the goal it has',
      'the file is gone; the root planner keeps the goal it has',
      '-1',
      'message.sent',
    ]);
    expect(await tasks.unreadCount(ROOT)).toBe(1);
  });

  it('after a restart, tells an edit made while the run was down once, and one already told not again', async () => {
    await startWatch().check();
    writeFileSync(goalPath, `${GOAL}- build trim\n`);
    await startWatch().check();
    await close();
    open();
    // The same file again, after a restart: told already.
    await startWatch().check();
    expect(await steeringEvents()).toHaveLength(2);
    await close();
    writeFileSync(goalPath, `${GOAL}- build trim\n- build slug\n`);
    open();
    const resumed = startWatch();
    await resumed.check();
    await resumed.check();
    const [, , changed, sent] = await steeringEvents();
    expect(changed).toMatchObject({ type: 'goal.changed', data: { added: 1, removed: 0 } });
    expect(sent).toMatchObject({ type: 'message.sent', data: { text: expect.stringContaining('+ - build slug') } });
    expect(await steeringEvents()).toHaveLength(4);
    // The file that disappeared before a restart is not recorded again after it.
    rmSync(goalPath);
    await resumed.check();
    await close();
    open();
    await startWatch().check();
    expect((await steeringEvents()).filter((event) => event.type === 'goal.changed' && event.data.error !== undefined)).toHaveLength(1);
  });

  it('compares the file as the stores keep it: a goal with credentials in a URL is not taken for an edit', async () => {
    const redactor = createSecretRedactor(['sk-planted-0123456789']);
    const secretGoal = '# Fetcher\n\nUse https://me:hunter2@example.invalid/api with key sk-planted-0123456789.\n';
    writeFileSync(goalPath, secretGoal);
    await tasks.createTask(
      { id: 'task-root-2', runId: 'run-2', parentTaskId: null, createdBy: null, kind: 'planner', title: 'Fetcher', body: redactor.redactText(secretGoal), scope: null, retryOf: null },
      1,
    );
    const { record } = createAgentRecorder(events, 'run-2', 'system');
    const steering = createSteeringRecorder({ events, tasks, runId: 'run-2', record });
    const watch = createGoalWatch({ path: goalPath, runId: 'run-2', rootTaskId: 'task-root-2', events, tasks, record, steering, redact: (text) => redactor.redactText(text), now: () => 1 });
    await watch.check();
    expect(await events.read({ runId: 'run-2' })).toEqual([]);
  });

  it('tells each edit once when a check is asked for while one is telling the edit before', async () => {
    const { record } = createAgentRecorder(events, RUN, 'system');
    const steering = createSteeringRecorder({ events, tasks, runId: RUN, record, wake: (key) => woken.push(key) });
    const second: { check: Promise<void> | null } = { check: null };
    // The second edit lands, and the second check starts, while the first check leaves its message.
    const sending: Pick<TaskStore, 'getTask' | 'sendMessage'> = {
      getTask: (id) => tasks.getTask(id),
      sendMessage: async (...args) => {
        const sent = await tasks.sendMessage(...args);
        if (second.check === null) {
          writeFileSync(goalPath, `${GOAL}- build trim\n- build slug\n`);
          second.check = watch.check();
        }
        return sent;
      },
    };
    const watch = createGoalWatch({ path: goalPath, runId: RUN, rootTaskId: ROOT, events, tasks: sending, record, steering, redact: (text) => text, now: () => 1_000 });
    writeFileSync(goalPath, `${GOAL}- build trim\n`);
    await watch.check();
    await second.check;
    const changes = (await steeringEvents()).flatMap((event) => (event.type === 'goal.changed' ? [[event.data.added, event.data.removed]] : []));
    expect(changes).toEqual([
      [1, 0],
      [1, 0],
    ]);
  });
});
