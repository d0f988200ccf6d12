import { join } from 'node:path';
import type { RecordedEvent } from '../../src/events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../../src/model/chat-model.js';
import type { ToolCall } from '../../src/model/messages.js';
import { resolveModel } from '../../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../../src/sim/sim-model-factory.js';
import type { EventStore } from '../../src/store/events/event-store.js';
import { createMemoryEventStore } from '../../src/store/events/memory-event-store.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/sqlite-task-store.js';
import { createdTask } from '../../src/store/testing/task-store-fixtures.js';
import type { TaskRecord, TaskStore } from '../../src/store/tasks/task-store.js';
import { openRepository } from '../../src/workspace/git/repository.js';
import { createWorktreeProvider } from '../../src/workspace/providers/worktree/worktree-provider.js';
import { createExampleRepository, type ExampleRepository } from './example-repository.js';
import { unconfinedCommandRunners } from '../../src/orchestrator/setup/command-sandbox.js';
import { defaultPromptSet } from '../../src/orchestrator/prompts/prompt-set.js';
import type { RunContext } from '../../src/orchestrator/context/run-context.js';
import { Wakeups } from '../../src/orchestrator/wakeups.js';
import { createWorkInFlight } from '../../src/orchestrator/in-flight/work-in-flight.js';
import { resolveRunSettings } from '../../src/events/run-settings.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/**
 * What the runner's tests share: a scripted planner, the sim, and a run over a real example
 * repository with a real SQLite task store, unconfined commands and its root task created.
 */

export type PlannerAnswer = { text?: string; calls?: { name: string; input: unknown }[] };

/** A planner model that answers from a script, seeing each request and its index; it keeps every request. */
export function scriptedPlanner(script: (request: ModelRequest, index: number) => PlannerAnswer): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted-planner',
    requests,
    async call(request): Promise<ModelResult> {
      requests.push({ ...request, messages: [...request.messages] });
      const answer = script(request, requests.length - 1);
      const toolCalls: ToolCall[] = (answer.calls ?? []).map((call, position) => ({
        id: `p${requests.length}_${position}`,
        name: call.name,
        input: JSON.stringify(call.input),
      }));
      return {
        ok: true,
        turn: { text: answer.text ?? '', toolCalls, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, costUsd: null, attempts: 1 },
      };
    },
  };
}

export function simModel(spec = 'sim'): ChatModel {
  const resolved = resolveModel(spec, { env: {} }, { sim: SIM_MODEL_FACTORY });
  if (!resolved.ok) throw new Error(resolved.error);
  return resolved.model;
}

export interface TestRun {
  readonly example: ExampleRepository;
  readonly tasks: TaskStore;
  readonly context: RunContext;
  readonly root: TaskRecord;
  /** Every event recorded, in order. */
  readonly seen: RecordedEvent[];
}

/** A run of the text-kit example (the caller cleans up `example` and closes `tasks`). */
export async function openTestRun(plannerModel: ChatModel, workerModel: ChatModel, events: EventStore = createMemoryEventStore()): Promise<TestRun> {
  const example = createExampleRepository();
  const opened = await openRepository(example.dir);
  if (!opened.ok) throw new Error(opened.error);
  const stateDir = defaultStateDir(example.dir);
  const tasks = openSqliteTaskStore(join(stateDir, 'colony.db'));
  const seen: RecordedEvent[] = [];
  const context: RunContext = {
    runId: 'run-1',
    repo: opened.repo,
    events,
    tasks,
    prompts: defaultPromptSet(),
    wakeups: new Wakeups(),
    workspaces: createWorktreeProvider(opened.repo),
    workspacesDir: join(stateDir, 'workspaces'),
    viewsDir: join(stateDir, 'views'),
    settings: resolveRunSettings({ goalPath: 'GOAL.md', workerModel: workerModel.spec, plannerModel: plannerModel.spec, workers: 1, workerMaxSteps: 60, plannerMaxSteps: 20 }),
    workerModel,
    plannerModel,
    commands: unconfinedCommandRunners(),
    now: Date.now,
    workInFlight: createWorkInFlight(events, 'run-1'),
    onEvent: (event) => seen.push(event),
  };
  const root = createdTask(
    await tasks.createTask(
      { id: 'task-root', runId: 'run-1', parentTaskId: null, createdBy: null, kind: 'planner', title: 'Goal', body: 'Build pad.', scope: null, retryOf: null },
      Date.now(),
    ),
  );
  return { example, tasks, context, root, seen };
}
