import { afterEach, describe, expect, it } from 'vitest';
import type { ExampleRepository } from '../../../../test/testing/example-repository.js';
import type { TaskStore } from '../../../store/tasks/task-store.js';
import { runTasks } from '../../runner/task-runner.js';
import { openTestRun, scriptedPlanner } from '../../../../test/testing/test-run.js';
import { toldIn } from './run-worker-task.js';

describe("a worker's steps", () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it('are counted for it once, at 80 % of them, so it hands off before it is stopped', async () => {
    // A worker that never stops looking around: it is told at its 8th call of 10, once.
    const worker = scriptedPlanner((request) => {
      const warned = request.messages.some((message) => message.role === 'user' && message.content.startsWith('Steps: '));
      return warned
        ? { calls: [{ name: 'submit_handoff', input: { status: 'partial', summary: 'Told I was running out; nothing landed.' } }] }
        : { calls: [{ name: 'list_dir', input: { path: '.' } }] };
    });
    const planner = scriptedPlanner((request) => {
      if (request.messages.some((message) => message.role === 'user' && message.content.startsWith('Handoff from task'))) {
        return { calls: [{ name: 'finish', input: { status: 'partial', summary: 'the worker ran short of steps' } }] };
      }
      if (request.messages.some((message) => message.role === 'tool')) return { text: 'Waiting.' };
      return { calls: [{ name: 'create_task', input: { title: 'Look around', brief: 'Look around the repository.', paths: ['src/'] } }] };
    });
    const opened = await openTestRun(planner, worker);
    ({ example, tasks } = opened);
    const context = { ...opened.context, settings: { ...opened.context.settings, workerMaxSteps: 10 } };
    await runTasks({ context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: opened.root.id, signal: new AbortController().signal });

    const notices = (worker.requests.at(-1)?.messages ?? []).flatMap((message) => (message.role === 'user' && message.content.startsWith('Steps: ') ? [message.content] : []));
    expect(notices).toEqual([
      'Steps: you have used 7 of your 10 steps (model calls); at 10 you are stopped and colony hands off for you. Land what works now (`merge_to_main`), then finish: hand off `partial` with exactly what is left if the task will not be done in time, rather than start something new.',
    ]);
    expect(worker.requests).toHaveLength(8);
    // The planner's system prompt has every placeholder filled, the bound of one worker's run among them.
    const system = planner.requests[0]?.messages[0];
    expect(system?.role === 'system' ? system.content : '').toContain('Publish in waves: at most 4 tasks in one answer');
    expect(system?.role === 'system' ? system.content : '{{').not.toContain('{{');
    // Its first message is the brief, then what colony knows around it, its budget among them.
    const task = worker.requests[0]?.messages[1];
    expect(task?.role === 'user' ? task.content.split('\n') : []).toEqual([
      'Look around the repository.',
      '',
      'About this task, from colony:',
      '- It serves: the run\'s goal "Goal"',
      '- Files its planner expects it to change: `src/`. Other workers may be changing other files at the same time.',
      '- Your step budget: 10 model calls; colony tells you when 80 % of them are used.',
    ]);
    expect((await tasks.listChildren(opened.root.id))[0]?.handoff).toMatchObject({ status: 'partial', synthetic: false });
  });

  it('count as told before a restart when the warning came in one message with other notices', () => {
    const warning = 'Steps: you have used 80 of your 100 steps (model calls).';
    expect(toldIn([{ role: 'user', content: warning }], 'Steps: ')).toBe(true);
    expect(toldIn([{ role: 'user', content: `Your workspace now has is-odd installed.\n\n${warning}` }], 'Steps: ')).toBe(true);
    expect(toldIn([{ role: 'user', content: 'Mind the Steps: section of the README.' }, { role: 'tool', callId: 'c', toolName: 'x', content: warning, isError: false }], 'Steps: ')).toBe(false);
  });
});
