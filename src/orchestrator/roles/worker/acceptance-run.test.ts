import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatModel, ModelRequest } from '../../../model/chat-model.js';
import type { EventStore } from '../../../store/events/event-store.js';
import { createMemoryEventStore } from '../../../store/events/memory-event-store.js';
import type { TaskStore } from '../../../store/tasks/task-store.js';
import { projectTestsPass, type ExampleRepository } from '../../../../test/testing/example-repository.js';
import { latestAgentsByTask } from '../../resume/prior-agents.js';
import type { RunContext } from '../../context/run-context.js';
import { runTasks } from '../../runner/task-runner.js';
import { openTestRun, scriptedPlanner, simModel } from '../../../../test/testing/test-run.js';
import { Wakeups } from '../../wakeups.js';

const PAD_TASK = readFileSync(new URL('../../../../examples/text-kit/tasks/01-pad.md', import.meta.url), 'utf8');

function handoffsIn(request: ModelRequest): string[] {
  return request.messages.flatMap((message) => (message.role === 'user' && message.content.startsWith('Handoff from task') ? [message.content] : []));
}

/** How many create_task calls the planner made so far: while more than the handoffs that arrived, it waits. */
function publishedIn(request: ModelRequest): number {
  return request.messages.filter((message) => message.role === 'tool' && message.toolName === 'create_task').length;
}


describe('acceptance checks in a run', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  async function setUp(plannerModel: ChatModel, workerModel: ChatModel, events?: EventStore) {
    const opened = await openTestRun(plannerModel, workerModel, events);
    ({ example, tasks } = opened);
    return opened;
  }

  const run = (context: RunContext, rootTaskId: string, signal = new AbortController().signal) =>
    runTasks({ context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId, signal });

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it("runs a task's checks on main at the worker's merge and tells the planner they passed, above the summary", async () => {
    const planner = scriptedPlanner((request) => {
      const [handoff] = handoffsIn(request);
      if (handoff !== undefined) return { calls: [{ name: 'finish', input: { status: 'done', summary: handoff.split('\n')[2] ?? '' } }] };
      if (publishedIn(request) > 0) return { text: 'Waiting for the pad handoff.' };
      return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK, acceptance: ['node --test', 'test -f src/text/pad.test.js'] } }] };
    });
    const { context, root, seen } = await setUp(planner, simModel('sim'));
    const outcome = await run(context, root.id);

    const child = (await tasks.listChildren(root.id))[0];
    expect(child?.acceptance).toEqual(['node --test', 'test -f src/text/pad.test.js']);
    expect(child?.body).toContain('## Acceptance checks');
    expect(child?.body).toContain('- `node --test`\n- `test -f src/text/pad.test.js`');
    const landed = seen.flatMap((event) => (event.type === 'merge.landed' ? [event.data.commit] : []));
    expect(landed).toHaveLength(1);
    const commit = landed[0] ?? '';
    expect(outcome.rootHandoff?.summary).toBe(`acceptance: passed at ${commit.slice(0, 12)}`);
    const message = handoffsIn(planner.requests.at(-1) ?? { messages: [], tools: [] })[0] ?? '';
    expect(message.split('\n').slice(1, 5)).toEqual(['status: done', `acceptance: passed at ${commit.slice(0, 12)}`, '- `node --test`: passed', '- `test -f src/text/pad.test.js`: passed']);
    const checked = seen.find((event) => event.type === 'acceptance.checked');
    expect(checked).toMatchObject({ data: { taskId: child?.id, claimed: 'done', commit, passed: true, skipped: null } });
    // Recorded before the handoff that carries it, by the worker that did the work.
    const order = seen.filter((event) => event.agentId === checked?.agentId).map((event) => event.type);
    expect(order.indexOf('acceptance.checked')).toBeLessThan(order.indexOf('handoff.submitted'));
    expect(child?.handoff?.acceptance).toMatchObject({ commit, passed: true });
  });

  it('flags a false claim to the planner, which retries it; the retry passes its checks', async () => {
    const planner = scriptedPlanner((request) => {
      const handoffs = handoffsIn(request);
      const last = handoffs.at(-1);
      const acceptance = ['node --test'];
      if (publishedIn(request) > handoffs.length) return { text: 'Waiting.' };
      if (last === undefined) return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK, acceptance } }] };
      if (last.includes('acceptance: claimed done, checks failed at')) {
        const taskId = /^Handoff from task (\S+)/.exec(last)?.[1] ?? '';
        return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK, retry_of: taskId, acceptance } }] };
      }
      return { calls: [{ name: 'finish', input: { status: 'done', summary: `after ${handoffs.length} handoffs: ${last.split('\n')[2] ?? ''}` } }] };
    });
    // Every first attempt is wrong, and a first attempt that fails merges anyway and claims done.
    const { context, root, seen } = await setUp(planner, simModel('sim?seed=3&bug=1&lie=1'));
    const outcome = await run(context, root.id);

    const [lied, retry] = await tasks.listChildren(root.id);
    expect(lied?.handoff).toMatchObject({ status: 'done', acceptance: { passed: false, skipped: null } });
    expect(lied?.handoff?.evidence).toMatch(/exit code: 0/);
    const firstMessage = planner.requests.flatMap(handoffsIn)[0] ?? '';
    const liedCommit = lied?.handoff?.acceptance?.commit ?? '';
    expect(firstMessage.split('\n').slice(1, 4)).toEqual(['status: done', `acceptance: claimed done, checks failed at ${liedCommit.slice(0, 12)}`, '- `node --test`: failed with exit code 1']);
    expect(firstMessage).toMatch(/\n {4}.*(padLeft|padRight)\(/);
    const checks = seen.flatMap((event) => (event.type === 'acceptance.checked' ? [event.data] : []));
    expect(checks.map((check) => [check.taskId, check.claimed, check.passed])).toEqual([
      [lied?.id, 'done', false],
      [retry?.id, 'done', true],
    ]);
    expect(checks[0]?.results[0]).toMatchObject({ command: 'node --test', exitCode: 1, timedOut: false });
    expect(checks[0]?.results[0]?.output).toContain('fail');
    // The retry's worker read what the checks found; it did not lie, fixed the module and landed it.
    expect(retry).toMatchObject({ retryOf: lied?.id, acceptance: ['node --test'] });
    expect(retry?.body).toContain('## Earlier attempts');
    expect(retry?.body).toContain('acceptance: claimed done, checks failed at');
    expect(outcome.rootHandoff?.summary).toMatch(/^after 2 handoffs: acceptance: passed at [0-9a-f]{12}$/);
    // What the checks said of each commit holds when the tests are run there by hand.
    example.git('checkout', '-q', '--force', '--detach', liedCommit);
    expect(projectTestsPass(example.dir)).toBe(false);
    example.git('checkout', '-q', 'main');
    expect(example.git('rev-parse', 'HEAD').trim()).toBe(retry?.handoff?.acceptance?.commit);
    expect(projectTestsPass(example.dir)).toBe(true);
  });

  it('gives the task back when the run stops during the checks; the resumed worker checks again and hands off once', async () => {
    const planner = scriptedPlanner((request) => {
      const [handoff] = handoffsIn(request);
      if (handoff !== undefined) return { calls: [{ name: 'finish', input: { status: 'done', summary: handoff.split('\n')[2] ?? '' } }] };
      if (publishedIn(request) > 0) return { text: 'Waiting for the pad handoff.' };
      return { calls: [{ name: 'create_task', input: { title: 'Build pad', brief: PAD_TASK, acceptance: ['sleep 1 && node --test'] } }] };
    });
    const events = createMemoryEventStore();
    const { context, root, seen } = await setUp(planner, simModel('sim'), events);
    const stop = new AbortController();
    const first = run(context, root.id, stop.signal);
    while (!seen.some((event) => event.type === 'acceptance.started')) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    const stopped = await first;

    expect(stopped).toMatchObject({ rootHandoff: null, released: 2 });
    const child = (await tasks.listChildren(root.id))[0];
    expect(child?.status).toBe('open');
    const worker = seen.find((event) => event.type === 'agent.started' && event.data.role === 'worker')?.agentId;
    expect(seen.some((event) => event.type === 'handoff.submitted' && event.agentId === worker)).toBe(false);
    expect(seen.some((event) => event.type === 'acceptance.checked')).toBe(false);
    const workspace = seen.find((event) => event.type === 'workspace.created' && event.agentId === worker);
    expect(workspace?.type === 'workspace.created' && existsSync(workspace.data.path)).toBe(true);

    // Resumed: each open task goes back to the agent that had it.
    const latest = await latestAgentsByTask(events, 'run-1');
    const priorAgents = new Map((await tasks.listTasks('run-1')).flatMap((task) => (task.status === 'open' && latest.has(task.id) ? [[task.id, latest.get(task.id) ?? ''] as const] : [])));
    const resumedFrom = seen.length;
    const outcome = await run({ ...context, wakeups: new Wakeups(), priorAgents }, root.id);

    const after = seen.slice(resumedFrom).filter((event) => event.agentId === worker);
    expect(after.map((event) => event.type)).toContain('agent.restored');
    // It had handed off already: no model call, only the checks again and its one handoff.
    expect(after.some((event) => event.type === 'model.requested')).toBe(false);
    expect(after.filter((event) => event.type === 'acceptance.checked')).toMatchObject([{ data: { passed: true, claimed: 'done' } }]);
    expect(seen.filter((event) => event.type === 'handoff.submitted' && event.agentId === worker)).toHaveLength(1);
    expect((await tasks.deliveredHandoffs('run-1')).map((message) => message.fromTaskId)).toEqual([child?.id]);
    expect((await tasks.getTask(child?.id ?? ''))?.handoff?.acceptance).toMatchObject({ passed: true });
    expect(outcome.rootHandoff?.summary).toMatch(/^acceptance: passed at [0-9a-f]{12}$/);
  });
});
