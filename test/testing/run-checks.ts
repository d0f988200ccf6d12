import { expect } from 'vitest';
import { openTaskTableToRead, runStateAt } from '../../src/orchestrator/setup/run-state.js';
import { parseScenario } from '../../src/sim/scenario/scenario.js';
import type { TaskRecord } from '../../src/store/tasks/task-store.js';
import { runCli, type ExampleRepository } from './example-repository.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** The stable part of `colony status --json` that scripts (and these tests) rely on. */
export interface StatusJson {
  run: { id: string; state: string; trunk: string | null; checkedOut: string | null };
  tasks: { total: number; byStatus: Record<string, number> };
  handoffs: { delivered: number };
  commits: { landed: number };
  tokens: { total: number };
  costUsd: number;
  agents: { id: string; role: string; parentId: string | null; state: string }[];
}

/**
 * The checks every finished, green run must pass: modules on the branch it landed on, one
 * handoff per task, a consistent status. `storeUrl` is the store its log is in, if not its
 * state directory; `released`, how many tasks worker hosts let go when they were stopped.
 */
export async function expectGreenRun(repo: ExampleRepository, storeUrl?: string, released = 0): Promise<{ status: StatusJson; tasks: TaskRecord[] }> {
  const found = await status(repo, storeUrl);
  expect(found.run.state).toBe('done');
  const trunk = found.run.trunk ?? 'main';
  const modules = goalModules(repo);
  const files = repo.git('ls-tree', '-r', '--name-only', trunk).split('\n');
  const index = repo.git('show', `${trunk}:src/index.js`);
  for (const module of modules) {
    expect(files).toContain(module);
    expect(index).toContain(module.replace(/^src\//, './'));
  }
  const { tasks, deliveredFrom } = await taskTable(repo, found.run.id, storeUrl);
  // Exactly once: every task closed, and its handoff delivered once, none missing, none extra.
  expect(tasks.every((task) => task.status !== 'open' && task.status !== 'running')).toBe(true);
  expect([...deliveredFrom].sort()).toEqual(tasks.map((task) => task.id).sort());
  expect(found.tasks.total).toBe(tasks.length);
  expect(found.handoffs.delivered).toBe(tasks.length);
  expect(found.commits.landed).toBeGreaterThanOrEqual(modules.length);
  expect(found.agents.filter((agent) => agent.role === 'root-planner')).toMatchObject([{ parentId: null, state: 'done' }]);
  // One agent per task, and one more for each task a stopped worker host let go (another took it up afresh).
  expect(found.agents.filter((agent) => agent.role !== 'root-planner').length).toBe(tasks.length + released);
  expect(found.tokens.total).toBeGreaterThan(0);
  return { status: found, tasks };
}

export async function status(repo: ExampleRepository, storeUrl?: string): Promise<StatusJson> {
  const result = await runCli(['status', '--repo', repo.dir, '--json', ...(storeUrl === undefined ? [] : ['--store', storeUrl])]);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

function goalModules(repo: ExampleRepository): string[] {
  const parsed = parseScenario(repo.git('show', 'main:GOAL.md'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario.modules.map((module) => module.path);
}

/** Every task of the run but the root, and the handoffs the store delivered, read from the run's own store. */
async function taskTable(repo: ExampleRepository, runId: string, storeUrl: string | undefined): Promise<{ tasks: TaskRecord[]; deliveredFrom: string[] }> {
  const store = await openTaskTableToRead(runStateAt(defaultStateDir(repo.dir), storeUrl));
  if (store === null) throw new Error(`the run's state in ${defaultStateDir(repo.dir)} has no task table`);
  try {
    const tasks = (await store.listTasks(runId)).filter((task) => task.parentTaskId !== null);
    return { tasks, deliveredFrom: (await store.deliveredHandoffs(runId)).map((message) => message.fromTaskId ?? '') };
  } finally {
    await store.close();
  }
}
