import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/sqlite-task-store.js';
import { readLoggedEvents, runColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** Each run here takes 15 to 40 seconds on the slowed sim; a loaded machine takes longer. */
const TEST_TIMEOUT_MS = 180_000;

let repo: ExampleRepository;
let stateDir: string;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  stateDir = defaultStateDir(repo.dir);
});

afterEach(() => {
  repo.cleanup();
});

function startRun(model: string, workers: number, signal?: AbortSignal): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', model, '--workers', String(workers), '--quiet', '--json'];
  return runCli(argv, signal === undefined ? {} : { signal });
}

function ofType<Type extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: Type): Extract<ColonyEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: Type }> => event.type === type);
}

/** Worker agents started and not ended (or failed) yet, at the end of `events`. */
function workersAtWork(events: readonly ColonyEvent[]): Set<string> {
  const workers = new Set(ofType(events, 'agent.started').filter((event) => event.data.role === 'worker').map((event) => event.agentId));
  const running = new Set<string>();
  for (const event of events) {
    if (!workers.has(event.agentId)) continue;
    if (event.type === 'agent.started' || event.type === 'agent.restored') running.add(event.agentId);
    else if (event.type === 'agent.ended' || event.type === 'agent.failed') running.delete(event.agentId);
  }
  return running;
}

/**
 * The most workers at work at once as each worker claimed after `fromSeq` starts (or is taken up
 * again), counting every worker still at work then (those claimed before may still be ending),
 * and how many such workers started.
 */
function mostAtOnceAfter(events: readonly ColonyEvent[], fromSeq: number): { most: number; started: number } {
  const claimedAfter = new Set(ofType(events, 'task.claimed').filter((event) => event.seq > fromSeq && event.data.kind === 'worker').map((event) => event.data.taskId));
  const workerTasks = new Map(ofType(events, 'agent.started').filter((event) => event.data.role === 'worker').map((event) => [event.agentId, event.data.taskId]));
  let most = 0;
  let started = 0;
  events.forEach((event, index) => {
    if (event.seq <= fromSeq || (event.type !== 'agent.started' && event.type !== 'agent.restored')) return;
    // A worker taken up again after a restart starts over as `agent.restored`.
    const taskId = workerTasks.get(event.agentId);
    if (taskId === undefined || !claimedAfter.has(taskId)) return;
    started += 1;
    most = Math.max(most, workersAtWork(events.slice(0, index + 1)).size);
  });
  return { most, started };
}

describeRuns('changing the worker limit and stopping agents from another process', () => {
  it('runs no more than one worker at once after `colony workers 1`, and the run still ends done', async () => {
    const running = startRun('sim?seed=3&latency=50..150', 3);
    // Two workers at once: the run's --workers 3 is in force.
    const before = await waitForLoggedEvent(stateDir, (event) => event.type === 'agent.started' && event.data.role === 'worker' && workersAtWork(readLoggedEvents(stateDir)).size >= 2, 60_000);
    const changed = await runColonyProcess(['workers', '1', '--reason', 'the machine is busy', '--repo', repo.dir], repo.dir);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toMatch(/^Run run-\S+ now runs up to 1 worker\(s\) at once \(was 3\)\. Workers already running go on; no new one starts until fewer than that run\.\n$/);
    const event = await waitForLoggedEvent(stateDir, (logged) => logged.type === 'workers.changed');
    expect(event).toMatchObject({ agentId: 'system', data: { workers: 1, previous: 3, by: 'user' } });
    const status = await runCli(['status', '--repo', repo.dir]);
    expect(status.stdout).toContain('\nWorkers: up to 1 at once\n');

    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(stateDir);
    expect(before.seq).toBeLessThan(event.seq);
    const after = mostAtOnceAfter(events, event.seq);
    expect(after.started).toBeGreaterThan(0);
    expect(after.most).toBe(1);
    const again = await runColonyProcess(['workers', '2', '--repo', repo.dir], repo.dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/has ended \(done\)/);
  }, TEST_TIMEOUT_MS);

  it('stops a running worker with `colony stop`: its task hands off failed, "stopped by the user", and the run still ends done', async () => {
    // Slow enough that the worker is still at work when a stop from another process lands: the
    // CLI starting under load and the run's two-second look at requests can take seconds.
    const running = startRun('sim?seed=5&latency=1000..1600', 3);
    const started = await waitForLoggedEvent(stateDir, (event) => event.type === 'agent.started' && event.data.role === 'worker', 60_000);
    const taskId = started.type === 'agent.started' ? started.data.taskId : '';
    const [stopped, root, nobody] = await Promise.all([
      runColonyProcess(['stop', started.agentId, '--reason', 'trying another way', '--repo', repo.dir], repo.dir),
      runColonyProcess(['stop', 'task-nope', '--repo', repo.dir], repo.dir),
      runColonyProcess(['workers', 'many', '--repo', repo.dir], repo.dir),
    ]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe(
      `Stopping the worker ${started.agentId} (task ${taskId}, "${started.type === 'agent.started' ? started.data.title : ''}") of run ${started.runId}: it stops at its next step, and its task closes as failed with your reason, for its planner to publish again.\n`,
    );
    expect(root.code).toBe(2);
    expect(root.stderr).toContain('has no task or agent task-nope. Stop one of the agents at work, by task id or agent id:');
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain('colony workers takes how many workers may run at once, a whole number from 1 to 256, got "many"');
    const rootAgent = ofType(readLoggedEvents(stateDir), 'agent.started').find((event) => event.data.role === 'root-planner');
    const refused = await runColonyProcess(['stop', rootAgent?.agentId ?? '', '--repo', repo.dir], repo.dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is the root planner');

    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(stateDir);
    expect(ofType(events, 'agent.stop-requested').map((event) => event.data)).toEqual([{ taskId, stoppedAgentId: started.agentId, reason: 'trying another way', requestSeq: 1 }]);
    expect(ofType(events, 'handoff.delivered').find((event) => event.data.taskId === taskId)?.data.status).toBe('failed');
    const told = ofType(events, 'message.received').filter((event) => event.data.fromTaskId === taskId);
    expect(told.map((event) => event.data.content)).toEqual([expect.stringContaining('summary: The worker was stopped by the user: trying another way')]);
    const tasks = openSqliteTaskStore(join(stateDir, 'colony.db'), { readOnly: true });
    try {
      expect((await tasks.getTask(taskId))?.handoff).toMatchObject({ status: 'failed', summary: 'The worker was stopped by the user: trying another way' });
    } finally {
      await tasks.close();
    }
  }, TEST_TIMEOUT_MS);

  it('keeps a worker limit and a stop asked for while the run was stopped through `colony resume`', async () => {
    const stop = new AbortController();
    const running = startRun('sim?seed=4&latency=100..200', 3, stop.signal);
    await waitForLoggedEvent(stateDir, (event) => event.type === 'agent.started' && event.data.role === 'worker' && workersAtWork(readLoggedEvents(stateDir)).size >= 2, 60_000);
    stop.abort();
    expect((await running).code).toBe(1);
    const stoppedRun = readLoggedEvents(stateDir);
    const released = ofType(stoppedRun, 'task.released').map((event) => event.data.taskId);
    const worker = ofType(stoppedRun, 'agent.started').find((event) => event.data.role === 'worker' && released.includes(event.data.taskId));
    expect(worker).toBeDefined();

    // No run goes: each command records what it did in the log itself, and says the run acts on it when resumed.
    const limited = await runColonyProcess(['workers', '1', '--repo', repo.dir], repo.dir);
    expect(limited.stdout).toContain('The run is not running now; it goes on with 1 when you continue it with colony resume.');
    const halted = await runColonyProcess(['stop', worker?.data.taskId ?? '', '--reason', 'not this way', '--repo', repo.dir], repo.dir);
    expect(halted.code, halted.stderr).toBe(0);
    expect(halted.stdout).toContain('the run is not running now; its task is closed as failed with your reason when you continue the run with colony resume');
    const recorded = readLoggedEvents(stateDir).filter((event) => event.seq > (stoppedRun.at(-1)?.seq ?? 0));
    expect(recorded.map((event) => [event.type, event.data])).toEqual([
      ['workers.changed', { workers: 1, previous: 3, by: 'user', requestSeq: 1 }],
      ['agent.stop-requested', { taskId: worker?.data.taskId, stoppedAgentId: worker?.agentId, reason: 'not this way', requestSeq: 2 }],
    ]);

    const result = await runCli(['resume', '--repo', repo.dir, '--quiet', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done' });
    const events = readLoggedEvents(stateDir);
    const resumed = events.find((event) => event.type === 'run.resumed');
    const after = mostAtOnceAfter(events, resumed?.seq ?? 0);
    expect(after.started).toBeGreaterThan(0);
    expect(after.most).toBe(1);
    // The stopped worker was not taken up again: its task closed, failed, saying why.
    expect(events.filter((event) => event.seq > (resumed?.seq ?? 0) && event.agentId === worker?.agentId)).toEqual([]);
    expect(ofType(events, 'handoff.delivered').find((event) => event.data.taskId === worker?.data.taskId)?.data.status).toBe('failed');
    const told = ofType(events, 'message.received').filter((event) => event.data.fromTaskId === worker?.data.taskId);
    expect(told.map((event) => event.data.content)).toEqual([expect.stringContaining('summary: The worker was stopped by the user: not this way')]);
  }, TEST_TIMEOUT_MS);
});
