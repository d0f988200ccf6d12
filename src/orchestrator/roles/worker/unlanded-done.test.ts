import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../../model/chat-model.js';
import type { ExampleRepository } from '../../../../test/testing/example-repository.js';
import type { TaskStore } from '../../../store/tasks/task-store.js';
import { runTasks } from '../../runner/task-runner.js';
import { openTestRun, scriptedPlanner } from '../../../../test/testing/test-run.js';

/** The results the worker's calls got so far, in order. */
function toolResults(request: ModelRequest): string[] {
  return request.messages.flatMap((message) => (message.role === 'tool' ? [message.content] : []));
}

describe('a worker that claims done with work not on main', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it('is told once what its workspace holds and what to do, and its next done is taken as it is', async () => {
    const handoffDone = { name: 'submit_handoff', input: { status: 'done', summary: 'The notes are written.', evidence: 'cat NOTES.md: the notes' } };
    // A real model's habit: notes written into the repository, and done claimed without merging.
    const worker = scriptedPlanner((request) => {
      const results = toolResults(request);
      if (results.length === 0) return { calls: [{ name: 'write_file', input: { path: 'NOTES.md', content: 'what I did\n' } }] };
      if (results.length === 1) return { calls: [handoffDone] };
      if (results.length === 2) return { calls: [{ name: 'run_command', input: { command: 'rm NOTES.md' } }] };
      return { calls: [handoffDone] };
    });
    const planner = scriptedPlanner((request) => {
      const handoff = request.messages.some((message) => message.role === 'user' && message.content.startsWith('Handoff from task'));
      if (handoff) return { calls: [{ name: 'finish', input: { status: 'done', summary: 'the notes task handed off' } }] };
      if (request.messages.some((message) => message.role === 'tool')) return { text: 'Waiting.' };
      return { calls: [{ name: 'create_task', input: { title: 'Write notes', brief: 'Write down what you did.' } }] };
    });
    const opened = await openTestRun(planner, worker);
    ({ example, tasks } = opened);
    const outcome = await runTasks({ context: opened.context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: opened.root.id, signal: new AbortController().signal });

    const told = toolResults(worker.requests.at(-1) ?? { messages: [], tools: [] });
    expect(told[1]).toBe(
      "error: Not landed: you claim the task is done, but your workspace holds work that is not on main (uncommitted: NOTES.md). Call `merge_to_main` to land it, then `submit_handoff` again. If that work is not part of the task (a scratch file, notes), delete it first. If the task needed no change because main already does what it asks, submit again and say so in the summary; a second `done` is taken as it is.",
    );
    const child = (await tasks.listChildren(opened.root.id))[0];
    expect(child?.handoff).toMatchObject({ status: 'done', concerns: [] });
    expect(outcome.rootHandoff?.status).toBe('done');
    expect(example.git('ls-tree', '--name-only', 'main')).not.toContain('NOTES.md');
  });
});
