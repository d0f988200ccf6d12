import { unconfinedCommandRunners } from '../setup/command-sandbox.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import { resolveModel } from '../../model/registry.js';
import { SIM_MODEL_FACTORY } from '../../sim/sim-model-factory.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { openRepository } from '../../workspace/git/repository.js';
import { createExampleRepository, type ExampleRepository } from '../../../test/testing/example-repository.js';
import { defaultPromptSet } from '../prompts/prompt-set.js';
import { runWorkerTask } from '../roles/worker/run-worker-task.js';
import { createWorkInFlightFold, HOT_FILES_WINDOW, WORK_IN_FLIGHT_EVENT_TYPES, type WorkInFlightFold } from './work-in-flight-fold.js';
import { DEFAULT_FRESHNESS } from '../../events/run-settings.js';
import { defaultStateDir } from '../setup/state-directory.js';

const RUN = 'run-1';

function taskFile(name: string): string {
  return readFileSync(new URL(`../../../examples/text-kit/tasks/${name}.md`, import.meta.url), 'utf8');
}

async function foldOf(store: EventStore, runId = RUN): Promise<WorkInFlightFold> {
  const fold = createWorkInFlightFold(runId);
  for (const event of await store.read({ types: WORK_IN_FLIGHT_EVENT_TYPES })) fold.add(event);
  return fold;
}

function created(taskId: string, paths: string[], extra: Partial<Extract<EventBody, { type: 'task.created' }>['data']> = {}): EventBody {
  return { type: 'task.created', data: { taskId, parentTaskId: 'task-root', kind: 'worker', title: `Task ${taskId}`, scope: null, retryOf: null, paths, ...extra } };
}

function landed(files: string[], autoResolved: string[] = []): EventBody {
  return { type: 'merge.landed', data: { commit: 'c'.repeat(40), mainBefore: 'b'.repeat(40), attempts: 1, files, durationMs: 3, autoResolved } };
}

function conflicted(files: string[]): EventBody {
  return { type: 'merge.conflicted', data: { files, mainBefore: 'b'.repeat(40) } };
}

/** Appends events as the agents of a run record them. */
function recorder(store: EventStore, runId = RUN) {
  return (agentId: string, ...bodies: EventBody[]): RecordedEvent[] => bodies.map((body) => store.append({ ...body, runId, agentId }));
}

function workerStarted(taskId: string): EventBody {
  return { type: 'agent.started', data: { role: 'worker', taskId, title: taskId, model: 'sim', systemPrompt: 'p', task: 't', tools: [] } };
}

describe('the work-in-flight fold, on what real workers recorded', () => {
  let example: ExampleRepository | undefined;

  afterEach(() => {
    example?.cleanup();
  });

  it('knows which files each task touched and which files its merges met in', async () => {
    example = createExampleRepository();
    const opened = await openRepository(example.dir);
    if (!opened.ok) throw new Error(opened.error);
    const model = resolveModel('sim', { env: {} }, { sim: SIM_MODEL_FACTORY });
    if (!model.ok) throw new Error(model.error);
    const store = createMemoryEventStore();
    const record = recorder(store);
    record('planner-a', created('task-pad', ['src/text/pad.js', 'src/index.js']), created('task-case', ['src/text/']));

    // Two workers at once on one base: both re-export from src/index.js.
    const run = (id: string, file: string) =>
      runWorkerTask(
        {
          repo: opened.repo,
          workspaces: createWorktreeProvider(opened.repo),
          commands: unconfinedCommandRunners(),
          events: store,
          workerModel: model.model,
          runId: RUN,
          workspacesDir: join(defaultStateDir(example?.dir ?? ''), 'workspaces'),
          viewsDir: join(defaultStateDir(example?.dir ?? ''), 'views'),
          settings: { workerMaxSteps: 40, mergeCheck: null, freshness: DEFAULT_FRESHNESS, promptCache: true },
          prompts: defaultPromptSet(),
        },
        { task: { id, title: id, body: taskFile(file) } },
      );
    const results = await Promise.all([run('task-pad', '01-pad'), run('task-case', '02-case')]);
    expect(results.map((result) => result.handoff.status)).toEqual(['done', 'done']);

    const fold = await foldOf(store);
    const byTask = new Map(fold.inFlight().map((task) => [task.taskId, task]));
    expect(byTask.get('task-pad')).toMatchObject({ state: 'open', declared: ['src/text/pad.js', 'src/index.js'] });
    expect([...(byTask.get('task-pad')?.touched ?? [])].sort()).toEqual(['src/index.js', 'src/text/pad.js', 'src/text/pad.test.js']);
    expect([...(byTask.get('task-case')?.touched ?? [])].sort()).toEqual(['src/index.js', 'src/text/case.js', 'src/text/case.test.js']);

    const landings = (await store.read({ types: ['merge.landed'] })).flatMap((event) => (event.type === 'merge.landed' ? [event.data] : []));
    const settledIndex = landings.filter((landing) => (landing.autoResolved ?? []).includes('src/index.js')).length;
    expect(fold.hotFiles()).toEqual([{ path: 'src/index.js', landed: 2, settled: settledIndex, conflicted: 0 }]);

    record('system', { type: 'handoff.delivered', data: { taskId: 'task-pad', parentTaskId: 'task-root', status: 'done' } });
    const after = createWorkInFlightFold(RUN);
    for (const event of await store.read()) after.add(event);
    expect(after.inFlight().map((task) => task.taskId)).toEqual(['task-case']);
  }, 120_000);
});

describe('the work-in-flight fold', () => {
  it('counts a write once it succeeded, in the workspace’s terms, and follows claims and releases', async () => {
    const store = createMemoryEventStore();
    const record = recorder(store);
    record('planner-a', created('task-a', ['./src/a.js', 'docs/']), created('task-p', [], { kind: 'planner', scope: 'src/geo/' }));
    record(
      'worker-1',
      { type: 'workspace.created', data: { path: '/work/ws/worker-1', branch: 'colony/worker-1', baseCommit: 'b'.repeat(40), durationMs: 1 } },
      workerStarted('task-a'),
    );
    record('system', { type: 'task.claimed', data: { taskId: 'task-a', kind: 'worker', attempt: 1, holder: 'runner' } });
    const call = (callId: string, name: string, path: string, ok: boolean): EventBody[] => [
      { type: 'tool.started', data: { step: 1, callId, name, input: JSON.stringify({ path, content: 'x' }) } },
      { type: 'tool.ended', data: { step: 1, callId, name, ok, output: ok ? 'ok' : 'error', durationMs: 1 } },
    ];
    record(
      'worker-1',
      ...call('c1', 'write_file', 'src/b.js', true),
      ...call('c2', 'edit_file', '/work/ws/worker-1/src/c.js', true),
      ...call('c3', 'write_file', 'src/refused.js', false),
      ...call('c4', 'read_file', 'src/read.js', true),
      ...call('c5', 'write_file', '/elsewhere/d.js', true),
      ...call('c6', 'write_file', '../outside.js', true),
      { type: 'tool.started', data: { step: 2, callId: 'c7', name: 'write_file', input: 'not json' } },
      { type: 'tool.ended', data: { step: 2, callId: 'c7', name: 'write_file', ok: false, output: 'error', durationMs: 1 } },
    );
    // Another run's worker on the same store changes nothing here.
    recorder(store, 'run-2')('worker-9', workerStarted('task-a'), ...call('c8', 'write_file', 'src/other-run.js', true));

    let fold = await foldOf(store);
    expect(fold.inFlight()).toMatchObject([
      { taskId: 'task-a', kind: 'worker', state: 'running', declared: ['src/a.js', 'docs/'], touched: ['src/b.js', 'src/c.js'] },
      { taskId: 'task-p', kind: 'planner', state: 'open', declared: ['src/geo/'], touched: [] },
    ]);
    expect(fold.parentOf('task-a')).toBe('task-root');
    expect(fold.parentOf('task-unknown')).toBeUndefined();

    record('system', { type: 'task.released', data: { taskId: 'task-a', reason: 'stopped' } });
    fold = await foldOf(store);
    expect(fold.inFlight()[0]?.state).toBe('open');
  });

  it('takes landed and conflicted files as touched, and counts hot files over the recent merges only', async () => {
    const store = createMemoryEventStore();
    const record = recorder(store);
    record('planner-a', created('task-a', []), created('task-b', []));
    record('worker-1', workerStarted('task-a'), conflicted(['src/index.js']), landed(['src/index.js', 'src/a.js'], ['src/index.js']));
    record('worker-2', workerStarted('task-b'), landed(['src/index.js', 'src/b.js']), landed(['src/b.js']));

    const fold = await foldOf(store);
    expect(fold.inFlight().map((task) => task.touched)).toEqual([['src/index.js', 'src/a.js'], ['src/index.js', 'src/b.js']]);
    expect(fold.hotFiles()).toEqual([
      { path: 'src/index.js', landed: 2, settled: 1, conflicted: 1 },
      { path: 'src/b.js', landed: 2, settled: 0, conflicted: 0 },
    ]);

    // A window's worth of later merges elsewhere pushes these out.
    record('worker-2', ...Array.from({ length: HOT_FILES_WINDOW }, (_, index) => landed([`src/new-${index % 10}.js`])));
    const later = await foldOf(store);
    expect(later.hotFiles().map((file) => file.path)).not.toContain('src/index.js');
    expect(later.hotFiles()).toHaveLength(10);
    expect(later.hotFiles()[0]).toEqual({ path: 'src/new-0.js', landed: HOT_FILES_WINDOW / 10, settled: 0, conflicted: 0 });
  });

  it('folds each event once, however often it is offered', async () => {
    const store = createMemoryEventStore();
    const record = recorder(store);
    record('planner-a', created('task-a', []));
    record('worker-1', workerStarted('task-a'), landed(['src/a.js']));
    const fold = await foldOf(store);
    for (const event of await store.read()) fold.add(event);
    expect(fold.hotFiles()).toEqual([]);
    expect(fold.lastSeq).toBe(await store.lastSeq());
  });
});
