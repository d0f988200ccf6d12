import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../../events/event-types.js';
import { createMemoryEventStore } from '../../../store/events/memory-event-store.js';
import type { ExampleRepository } from '../../../../test/testing/example-repository.js';
import type { TaskStore } from '../../../store/tasks/task-store.js';
import { runTasks } from '../../runner/task-runner.js';
import { openTestRun, scriptedPlanner } from '../../../../test/testing/test-run.js';
import { createMainHealth } from '../../green/main-health.js';
import { MAIN_FAILING_OPENING } from '../../../protocol/message-openings.js';

function snapshot(passed: boolean): EventBody {
  const failures = passed ? [] : ['✖ padLeft pads on the left', '✖ caseTitle keeps acronyms'];
  return {
    type: 'green.checked',
    data: { commit: 'c0ffee0123456789', command: 'node --test', passed, exitCode: passed ? 0 : 1, timedOut: false, durationMs: 5, outputTail: '', failures, trigger: 'landings', landed: 1 },
  };
}

describe('a worker on a red main', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it("is told at its start which failures main has already, and the notice goes once main passes", async () => {
    const events = createMemoryEventStore();
    events.append({ ...snapshot(false), runId: 'run-1', agentId: 'system' });
    const worker = scriptedPlanner((_request, index) => {
      // main passes again while the worker looks around.
      if (index === 0) events.append({ ...snapshot(true), runId: 'run-1', agentId: 'system' });
      return index < 1
        ? { calls: [{ name: 'list_dir', input: { path: '.' } }] }
        : { calls: [{ name: 'submit_handoff', input: { status: 'blocked', summary: 'Only looked around.' } }] };
    });
    const planner = scriptedPlanner((request) => {
      if (request.messages.some((message) => message.role === 'user' && message.content.startsWith('Handoff from task'))) {
        return { calls: [{ name: 'finish', input: { status: 'partial', summary: 'the worker only looked' } }] };
      }
      if (request.messages.some((message) => message.role === 'tool')) return { text: 'Waiting.' };
      return { calls: [{ name: 'create_task', input: { title: 'Look around', brief: 'Look around the repository.' } }] };
    });
    const opened = await openTestRun(planner, worker, events);
    ({ example, tasks } = opened);
    const context = { ...opened.context, mainHealth: createMainHealth(events, 'run-1') };
    await runTasks({ context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: opened.root.id, signal: new AbortController().signal });

    const told = worker.requests.map((request) =>
      request.messages.flatMap((message, index) => (message.role === 'user' && message.content.startsWith(MAIN_FAILING_OPENING) ? [{ fromEnd: request.messages.length - index, content: message.content }] : [])),
    );
    expect(told[0]).toHaveLength(1);
    expect(told[0]?.[0]?.fromEnd).toBe(1);
    expect(told[0]?.[0]?.content.split('\n').slice(0, 3)).toEqual([
      "Main is failing already: colony's last check of main (`node --test` at c0ffee012345) failed before your work landed, with:",
      '- ✖ padLeft pads on the left',
      '- ✖ caseTitle keeps acronyms',
    ]);
    expect(told[1]).toEqual([]);
    const notices = opened.seen.flatMap((event) => (event.type === 'agent.nudged' && event.data.notice === 'main-failing' ? [event.data.message === '' ? 'withdrawn' : 'told'] : []));
    expect(notices).toEqual(['told', 'withdrawn']);
  });
});
