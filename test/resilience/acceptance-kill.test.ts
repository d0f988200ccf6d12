import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';
import { chaosProblems } from '../testing/chaos-checks.js';
import { readLoggedEvents } from '../testing/colony-process.js';
import { leftoversOf } from '../testing/chaos-run.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { keepModules } from '../testing/small-goal.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));
const cannotConfine = confinedTestsUnavailable('bubblewrap');

let repo: ExampleRepository | null = null;

afterEach(() => {
  repo?.cleanup();
  repo = null;
});

/** The events in the log `database` (a state directory's colony.db) so far. */
function readEvents(database: string): ColonyEvent[] {
  return readLoggedEvents(dirname(database));
}

/** Waits until the log's newest events include `type`, then SIGKILLs the process. */
async function killWhen(child: ReturnType<typeof spawn>, database: string, type: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`colony ended (exit ${child.exitCode}) before ${type} was recorded`);
    if (existsSync(database)) {
      try {
        if (readEvents(database).some((event) => event.type === type)) {
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
          return;
        }
      } catch {
        // The log is being created.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGKILL');
  throw new Error(`${type} was not recorded within ${timeoutMs} ms`);
}

describe.skipIf(cannotConfine !== null)('a run killed while acceptance checks run', () => {
  it('resumes to exactly one handoff for the task, its checks run again and passed', { timeout: 120_000 }, async () => {
    const example = createExampleRepository('toolbox');
    repo = example;
    // A test command slow enough that the kill lands while it runs as the task's check.
    keepModules(example, ['src/numbers/clamp.js'], 'sleep 2 && node scripts/test.js');
    const database = join(defaultStateDir(example.dir), 'colony.db');
    const child = spawn(process.execPath, [COLONY, 'run', join(example.dir, 'GOAL.md'), '--repo', example.dir, '--model', 'sim', '--workers', '1', '--quiet'], {
      cwd: example.dir,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
    });
    await killWhen(child, database, 'acceptance.started', 60_000);

    const before = readEvents(database);
    const runId = before.find((event) => event.type === 'run.started')?.runId ?? '';
    const started = before.find((event) => event.type === 'acceptance.started');
    if (started?.type !== 'acceptance.started') throw new Error('no acceptance.started');
    const worker = started.agentId;
    const taskId = started.data.taskId;
    expect(before.some((event) => event.type === 'acceptance.checked' || (event.type === 'handoff.submitted' && event.agentId === worker))).toBe(false);
    // The kill took the check's commands with it.
    expect(await leftoversOf(runId)).toEqual([]);

    const resumed = await runCli(['resume', '--repo', example.dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ runId, status: 'done', check: { passed: true } });
    const { tasks } = await expectGreenRun(example);
    expect(await chaosProblems(example.dir, defaultStateDir(example.dir), runId)).toEqual([]);

    const after = readEvents(database).filter((event) => event.seq > (before.at(-1)?.seq ?? 0));
    const own = after.filter((event) => event.agentId === worker);
    // The same worker, taken up again: it had handed off, so it made no model call, only the checks again.
    expect(own.map((event) => event.type)).toContain('agent.restored');
    expect(own.some((event) => event.type === 'model.requested')).toBe(false);
    expect(own.filter((event) => event.type === 'acceptance.checked')).toMatchObject([{ data: { taskId, claimed: 'done', passed: true, commit: started.data.commit } }]);
    const handoffs = readEvents(database).filter((event) => event.type === 'handoff.submitted' && event.agentId === worker);
    expect(handoffs).toHaveLength(1);
    expect(tasks.find((task) => task.id === taskId)?.handoff?.acceptance).toMatchObject({ commit: started.data.commit, passed: true });
  });
});
