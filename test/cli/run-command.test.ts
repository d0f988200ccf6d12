import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/model/sim/scenario.js';
import { openSqliteTaskStore } from '../../src/store/sqlite-task-store.js';
import type { TaskRecord } from '../../src/store/task-store.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../support/example-repository.js';

interface StatusJson {
  run: { id: string; state: string };
  tasks: { total: number; byStatus: Record<string, number> };
  handoffs: { delivered: number };
  commits: { landed: number };
  tokens: { total: number };
  costUsd: number;
  agents: { id: string; role: string; parentId: string | null; state: string }[];
}

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

function goalModules(): string[] {
  const parsed = parseScenario(repo.git('show', 'main:GOAL.md'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.scenario.modules.map((module) => module.path);
}

/** Every task of the run but the root, and the handoffs the store delivered, read from the run's own store. */
function taskTable(runId: string): { tasks: TaskRecord[]; deliveredFrom: string[] } {
  const store = openSqliteTaskStore(join(repo.dir, '.colony', 'colony.db'), { readOnly: true });
  try {
    const tasks = store.listTasks(runId).filter((task) => task.parentTaskId !== null);
    return { tasks, deliveredFrom: store.deliveredHandoffs(runId).map((message) => message.fromTaskId ?? '') };
  } finally {
    store.close();
  }
}

async function status(): Promise<StatusJson> {
  const result = await runCli(['status', '--repo', repo.dir, '--json']);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

/** The checks every finished, green run must pass: modules on main, one handoff per task, a consistent status. */
async function expectGreenRun(): Promise<{ status: StatusJson; tasks: TaskRecord[] }> {
  const files = repo.git('ls-tree', '-r', '--name-only', 'main').split('\n');
  for (const module of goalModules()) {
    expect(files).toContain(module);
    expect(repo.git('show', 'main:src/index.js')).toContain(module.replace(/^src\//, './'));
  }
  const found = await status();
  expect(found.run.state).toBe('done');
  const { tasks, deliveredFrom } = taskTable(found.run.id);
  // Exactly once: every task closed, and its handoff delivered once, none missing, none extra.
  expect(tasks.every((task) => task.status !== 'open' && task.status !== 'running')).toBe(true);
  expect([...deliveredFrom].sort()).toEqual(tasks.map((task) => task.id).sort());
  expect(found.tasks.total).toBe(tasks.length);
  expect(found.handoffs.delivered).toBe(tasks.length);
  expect(found.commits.landed).toBeGreaterThanOrEqual(goalModules().length);
  const root = found.agents.find((agent) => agent.role === 'root-planner');
  expect(root).toMatchObject({ parentId: null, state: 'done' });
  const workers = found.agents.filter((agent) => agent.role === 'worker');
  expect(workers.length).toBe(tasks.length);
  expect(workers.every((worker) => worker.parentId === root?.id)).toBe(true);
  expect(found.tokens.total).toBeGreaterThan(0);
  return { status: found, tasks };
}

describe('colony run', () => {
  it('builds the small example with a root planner and four workers, and reports it', async () => {
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '4', '--json']);
    expect(result.code).toBe(0);
    const outcome = JSON.parse(result.stdout) as { status: string; check: { passed: boolean }; main: string };
    expect(outcome).toMatchObject({ status: 'done', check: { passed: true } });
    expect(repo.git('rev-parse', 'main').trim()).toBe(outcome.main);
    // The user's checkout is brought up to main at the end: nothing shows as changed.
    expect(repo.git('status', '--porcelain')).toBe('');
    await expectGreenRun();

    const text = await runCli(['status', '--repo', repo.dir]);
    expect(text.stdout).toMatch(/root-planner planner-\S+ +done/);
  });

  it('still finishes green when workers write bugs, send malformed calls and die; the dead ones are retried', async () => {
    const model = 'sim?seed=11&bug=0.2&malformed=0.05&crash=0.05';
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', model, '--workers', '4', '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { tasks } = await expectGreenRun();
    const synthetic = tasks.filter((task) => task.handoff?.synthetic === true);
    expect(synthetic.length).toBeGreaterThan(0);
    for (const dead of synthetic) {
      const retry = tasks.find((task) => task.retryOf === dead.id);
      expect(retry?.body).toContain('## Earlier attempts');
    }
    // Every module whose first task died was landed by a retry in the end.
    const doneTitles = new Set(tasks.filter((task) => task.status === 'done').map((task) => task.title.replace(/^(Build|Fix) /, '').split(':')[0]));
    for (const dead of synthetic) expect(doneTitles.has(dead.title.replace(/^Build /, ''))).toBe(true);
  });

  it('refuses bad input with exit 2 and a message that says what to do, changing nothing', async () => {
    const missing = await runCli(['run', join(repo.dir, 'NOPE.md'), '--repo', repo.dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');

    writeFileSync(join(repo.dir, 'src', 'index.js'), '// edited by hand\n');
    const dirty = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir]);
    expect(dirty.code).toBe(2);
    expect(dirty.stderr).toContain('uncommitted changes (src/index.js)');
    expect(repo.git('status', '--porcelain')).toBe(' M src/index.js\n');

    const workers = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--workers', 'many']);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('expected a positive whole number');

    const model = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?speed=9']);
    expect(model.code).toBe(2);
    expect(model.stderr).toContain('unknown key "speed"');
  });
});

describe('colony status', () => {
  it('says there is no run, with exit 2, where none ran', async () => {
    const result = await runCli(['status', '--repo', repo.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('there is no run');
  });
});
