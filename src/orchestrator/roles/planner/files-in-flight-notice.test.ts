import { createWorktreeProvider } from '../../../workspace/providers/worktree/worktree-provider.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../../../model/chat-model.js';
import { resolveModel } from '../../../model/registry.js';
import { SIM_MODEL_FACTORY } from '../../../sim/sim-model-factory.js';
import type { EventStore } from '../../../store/events/event-store.js';
import { createMemoryEventStore } from '../../../store/events/memory-event-store.js';
import { openSqliteTaskStore } from '../../../store/sqlite/sqlite-task-store.js';
import { createdTask } from '../../../store/testing/task-store-fixtures.js';
import type { TaskStore } from '../../../store/tasks/task-store.js';
import { openRepository } from '../../../workspace/git/repository.js';
import { createExampleRepository, type ExampleRepository } from '../../../../test/testing/example-repository.js';
import { createFilesInFlightNotice, renderFilesInFlight } from './files-in-flight-notice.js';
import { unconfinedCommandRunners } from '../../setup/command-sandbox.js';
import { defaultPromptSet } from '../../prompts/prompt-set.js';
import type { RunContext } from '../../context/run-context.js';
import { runTasks } from '../../runner/task-runner.js';
import { Wakeups } from '../../wakeups.js';
import { createWorkInFlight, type FilesPicture, type TaskInFlight } from '../../in-flight/work-in-flight.js';
import { resolveRunSettings } from '../../../events/run-settings.js';
import { defaultStateDir } from '../../setup/state-directory.js';

const RUN = 'run-1';
const HEADER = 'Files in flight across the run';
const TEMPLATE = defaultPromptSet().text('files-in-flight');

function append(store: EventStore, agentId: string, ...bodies: EventBody[]): void {
  for (const body of bodies) store.append({ ...body, runId: RUN, agentId });
}

function created(taskId: string, parentTaskId: string, paths: string[]): EventBody {
  return { type: 'task.created', data: { taskId, parentTaskId, kind: 'worker', title: `Build ${taskId}`, scope: null, retryOf: null, paths } };
}

describe('the files-in-flight notice', () => {
  it('shows the picture as it stands now, and nothing once nothing is in flight or hot', async () => {
    const store = createMemoryEventStore();
    const notice = createFilesInFlightNotice(createWorkInFlight(store, RUN), 'root', defaultPromptSet());
    expect(await notice.current()).toBeNull();

    append(store, 'planner', created('task-a', 'root', ['src/a.js', 'src/index.js']), created('task-b', 'other', ['src/index.js']));
    expect(await notice.current()).toBe(
      [
        `${HEADER} (kept up to date by colony; it replaces any earlier list):`,
        'In flight (2 worker tasks):',
        '- task-a "Build task-a" (open, yours): declared src/a.js, src/index.js; nothing changed yet',
        '- task-b "Build task-b" (open): declared src/index.js; nothing changed yet',
        'Shared by tasks in flight:',
        '- src/index.js: task-a, task-b',
        'Two tasks that change one file may conflict when the second merges. Publish work on a file listed here after the handoff of the task that has it, or slice the work so tasks change different files. Declare `paths` on `create_task`: its result names any overlap.',
      ].join('\n'),
    );

    append(
      store,
      'worker-1',
      { type: 'agent.started', data: { role: 'worker', taskId: 'task-b', title: 'b', model: 'sim', systemPrompt: 'p', task: 't', tools: [] } },
      { type: 'tool.started', data: { step: 1, callId: 'c1', name: 'write_file', input: '{"path":"src/b.js","content":""}' } },
      { type: 'tool.ended', data: { step: 1, callId: 'c1', name: 'write_file', ok: true, output: 'ok', durationMs: 1 } },
    );
    expect(await notice.current()).toContain('- task-b "Build task-b" (open): declared src/index.js; changed src/b.js');

    // Once both handed off and no merge met anywhere, there is nothing to show.
    for (const taskId of ['task-a', 'task-b']) append(store, 'system', { type: 'handoff.delivered', data: { taskId, parentTaskId: 'root', status: 'done' } });
    expect(await notice.current()).toBeNull();
  });

  it('stays short however busy the run: the most relevant tasks, paths and files, the rest counted', () => {
    const task = (index: number, paths: string[], parentTaskId = 'elsewhere'): TaskInFlight => ({
      taskId: `task-${index}`,
      kind: 'worker',
      title: `Build module ${index} `.repeat(10),
      parentTaskId,
      state: index % 2 === 0 ? 'running' : 'open',
      declared: paths,
      touched: [],
      lastActivitySeq: index,
    });
    const inFlight = [
      ...Array.from({ length: 18 }, (_, index) => task(index, [`src/m${index}.js`])),
      task(18, ['src/mine.js'], 'root'),
      task(19, ['a.js', 'b.js', 'c.js', 'd.js', 'e.js', 'f.js']),
    ];
    const picture: FilesPicture = {
      inFlight,
      shared: Array.from({ length: 7 }, (_, index) => ({ path: `src/shared-${index}.js`, taskIds: ['task-2', 'task-3', 'task-5', 'task-7', 'task-9', 'task-11', 'task-13'] })),
      hot: Array.from({ length: 9 }, (_, index) => ({ path: `src/hot-${index}.js`, landed: 9 - index, settled: index === 0 ? 2 : 0, conflicted: index === 0 ? 1 : 0 })),
    };
    const lines = (renderFilesInFlight(picture, 'root', TEMPLATE) ?? '').split('\n');
    expect(lines[1]).toBe('In flight (6 of 20 worker tasks):');
    // Tasks in a shared path first (running before open, latest first), then the planner's own.
    expect(lines.slice(2, 8).map((line) => /^- (task-\d+)/.exec(line)?.[1])).toEqual(['task-2', 'task-13', 'task-11', 'task-9', 'task-7', 'task-5']);
    const clipped = (index: number) => `${`Build module ${index} `.repeat(4).slice(0, 59)}…`;
    expect(lines[3]).toBe(`- task-13 "${clipped(13)}" (open): declared src/m13.js; nothing changed yet`);
    expect(lines.indexOf('Shared by tasks in flight:')).toBe(8);
    expect(lines[9]).toBe('- src/shared-0.js: task-2, task-3, task-5, task-7 and 3 more');
    expect(lines[13]).toBe('- and 3 more shared paths');
    expect(lines[14]).toBe('Hot files in recent merges:');
    expect(lines[15]).toBe('- src/hot-0.js: 9 landings, 2 appends colony merged itself, 1 conflict');
    expect(lines[20]).toMatch(/^Two tasks that change one file/);
    expect(lines).toHaveLength(21);
    const mine = renderFilesInFlight({ ...picture, shared: [] }, 'root', TEMPLATE)?.split('\n')[2];
    expect(mine).toBe(`- task-18 "${clipped(18)}" (running, yours): declared src/mine.js; nothing changed yet`);
    const many = renderFilesInFlight({ inFlight: [task(19, ['a.js', 'b.js', 'c.js', 'd.js', 'e.js', 'f.js'])], shared: [], hot: [] }, 'root', TEMPLATE);
    expect(many).toContain('declared a.js, b.js, c.js and 3 more; nothing changed yet');
  });
});

/** A planner model that answers from a script and keeps every request it saw. */
function scriptedPlanner(script: (index: number) => { name: string; input: unknown }[]): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted-planner',
    requests,
    async call(request): Promise<ModelResult> {
      requests.push({ ...request, messages: [...request.messages] });
      const calls = script(requests.length - 1);
      const toolCalls = calls.map((call, position) => ({ id: `p${requests.length}_${position}`, name: call.name, input: JSON.stringify(call.input) }));
      return {
        ok: true,
        turn: { text: '', toolCalls, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, costUsd: null, attempts: 1 },
      };
    },
  };
}

describe('a planner in a run', () => {
  let example: ExampleRepository;
  let tasks: TaskStore;

  afterEach(async () => {
    await tasks.close();
    example.cleanup();
  });

  it('hears of the overlap when it publishes, and sees the files in flight before its later turns', async () => {
    example = createExampleRepository();
    const opened = await openRepository(example.dir);
    if (!opened.ok) throw new Error(opened.error);
    const sim = resolveModel('sim', { env: {} }, { sim: SIM_MODEL_FACTORY });
    if (!sim.ok) throw new Error(sim.error);
    const brief = (name: string) => readFileSync(new URL(`../../../../examples/text-kit/tasks/${name}.md`, import.meta.url), 'utf8');
    const planner = scriptedPlanner((index) => {
      if (index > 0) return index < 2 ? [] : [{ name: 'finish', input: { status: 'done', summary: 'both built' } }];
      return [
        { name: 'create_task', input: { title: 'Build pad', brief: brief('01-pad'), paths: ['src/text/pad.js', 'src/text/pad.test.js', 'src/index.js'] } },
        { name: 'create_task', input: { title: 'Build case', brief: brief('02-case'), paths: ['src/text/case.js', 'src/text/case.test.js', 'src/index.js'] } },
      ];
    });
    const stateDir = defaultStateDir(example.dir);
    tasks = openSqliteTaskStore(join(stateDir, 'colony.db'));
    const events = createMemoryEventStore();
    const context: RunContext = {
      runId: RUN,
      repo: opened.repo,
      events,
      tasks,
      wakeups: new Wakeups(),
      workspaces: createWorktreeProvider(opened.repo),
      workspacesDir: join(stateDir, 'workspaces'),
      viewsDir: join(stateDir, 'views'),
      settings: resolveRunSettings({ goalPath: 'GOAL.md', workerModel: sim.model.spec, plannerModel: planner.spec, workers: 1, workerMaxSteps: 60, plannerMaxSteps: 20 }),
      workerModel: sim.model,
      plannerModel: planner,
      commands: unconfinedCommandRunners(),
      now: Date.now,
      workInFlight: createWorkInFlight(events, RUN),
      prompts: defaultPromptSet(),
    };
    const root = createdTask(await tasks.createTask({ id: 'task-root', runId: RUN, parentTaskId: null, createdBy: null, kind: 'planner', title: 'Goal', body: 'Build pad and case.', scope: null, retryOf: null }, Date.now()));
    const outcome = await runTasks({ context, holder: 'runner-1', workers: () => 1, leaseMs: 30_000, rootTaskId: root.id, signal: new AbortController().signal });
    expect(outcome.rootHandoff?.status).toBe('done');

    const results = (await events.read({ types: ['tool.ended'] })).flatMap((event) => (event.type === 'tool.ended' && event.data.name === 'create_task' ? [event.data.output] : []));
    expect(results[0]).not.toContain('Overlap');
    expect(results[1]).toMatch(/Overlap: this task's paths meet work still in flight.*\n- task task-\S+ "Build pad" \((open|running)\): declared src\/index\.js/);

    // The notice stands after the conversation, once, and is never kept in it: each request
    // holds at most one, as its last message but the scratchpad, and the conversation none.
    const noticesIn = planner.requests.map((request) =>
      request.messages.flatMap((message, index) => (message.role === 'user' && message.content.startsWith(HEADER) ? [{ index, content: message.content }] : [])),
    );
    expect(noticesIn[0]).toEqual([]);
    for (const [call, notices] of noticesIn.entries()) {
      expect(notices.length).toBeLessThanOrEqual(1);
      const request = planner.requests[call];
      if (notices[0] !== undefined && request !== undefined) expect(request.messages.length - notices[0].index).toBeLessThanOrEqual(2);
    }
    // By the last call both landed and src/index.js is hot: the latest picture, not the first.
    expect(noticesIn.at(-1)?.[0]?.content).toContain('- src/index.js: 2 landings');
    const told = (await events.read({ types: ['agent.nudged'] })).flatMap((event) => (event.type === 'agent.nudged' && event.data.notice === 'files-in-flight' ? [event.data.message] : []));
    expect(told.length).toBeGreaterThan(1);
    for (let index = 1; index < told.length; index += 1) expect(told[index]).not.toBe(told[index - 1]);
    expect((await tasks.listTasks(RUN)).filter((task) => task.kind === 'worker').map((task) => task.paths)).toEqual([
      ['src/text/pad.js', 'src/text/pad.test.js', 'src/index.js'],
      ['src/text/case.js', 'src/text/case.test.js', 'src/index.js'],
    ]);
  }, 120_000);
});
