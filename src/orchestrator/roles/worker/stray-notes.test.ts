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

describe('a worker whose merge adds notes about its work', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it('is told once which files look like notes and what to do with them, and lands its work without them', async () => {
    // A real model's habit: a summary of the task written into the repository next to the work.
    const worker = scriptedPlanner((request) => {
      const results = toolResults(request);
      if (results.length === 0) {
        return {
          calls: [
            { name: 'write_file', input: { path: 'src/answer.js', content: 'export const answer = 42;\n' } },
            { name: 'write_file', input: { path: 'TASK_SUMMARY.md', content: '# Summary\n\nAdded src/answer.js.\n' } },
          ],
        };
      }
      if (results.length === 2) return { calls: [{ name: 'merge_to_main', input: { message: 'Add the answer' } }] };
      if (results.length === 3) return { calls: [{ name: 'run_command', input: { command: 'rm TASK_SUMMARY.md' } }] };
      if (results.length === 4) return { calls: [{ name: 'merge_to_main', input: { message: 'Add the answer' } }] };
      return { calls: [{ name: 'submit_handoff', input: { status: 'done', summary: 'Added src/answer.js.', evidence: 'merged' } }] };
    });
    const planner = scriptedPlanner((request) => {
      const handoff = request.messages.some((message) => message.role === 'user' && message.content.startsWith('Handoff from task'));
      if (handoff) return { calls: [{ name: 'finish', input: { status: 'done', summary: 'the answer handed off' } }] };
      if (request.messages.some((message) => message.role === 'tool')) return { text: 'Waiting.' };
      return { calls: [{ name: 'create_task', input: { title: 'Add the answer', brief: 'Export the answer from src/answer.js.' } }] };
    });
    const opened = await openTestRun(planner, worker);
    ({ example, tasks } = opened);
    const mainBefore = example.git('rev-parse', 'main').trim();
    const outcome = await runTasks({ context: opened.context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: opened.root.id, signal: new AbortController().signal });

    const told = toolResults(worker.requests.at(-1) ?? { messages: [], tools: [] });
    expect(told[2]).toBe(
      'error: Not merged: your change adds TASK_SUMMARY.md, which look like notes about your work rather than files of the project. Nothing was merged. What you want your planner to know goes in your handoff (its summary, notes and findings), not into the repository, where every later task would find it. Delete them, then call `merge_to_main` again. If they really belong to the project, call `merge_to_main` again as they are: a second merge is taken as it is.',
    );
    expect(told[4]).toMatch(/^merged into main as /);
    expect(outcome.rootHandoff?.status).toBe('done');
    const files = example.git('ls-tree', '-r', '--name-only', 'main');
    expect(files).toContain('src/answer.js');
    expect(files).not.toContain('TASK_SUMMARY.md');
    expect(example.git('rev-list', '--count', `${mainBefore}..main`).trim()).toBe('1');
  });
});
