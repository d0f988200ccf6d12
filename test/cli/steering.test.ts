import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { readLoggedEvents, runColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** Each run here takes 10 to 25 seconds on the sim; a loaded machine takes longer. */
const TEST_TIMEOUT_MS = 120_000;

let repo: ExampleRepository;
let stateDir: string;
/** The goal lives beside the repository, not in it: editing it leaves the repository's tree clean. */
let goalPath: string;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  stateDir = defaultStateDir(repo.dir);
  goalPath = join(repo.dir, '..', 'GOAL.md');
  writeFileSync(goalPath, readFileSync(join(repo.dir, 'GOAL.md'), 'utf8'));
});

afterEach(() => {
  repo.cleanup();
});

/** `colony run` in this process on the goal beside the repository; `colony say` and `colony andon` run as processes of their own. */
function startRun(model: string, workers: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(['run', goalPath, '--repo', repo.dir, '--model', model, '--workers', String(workers), '--quiet', '--json']);
}

function ofType<Type extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: Type): Extract<ColonyEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: Type }> => event.type === type);
}

describeRuns('steering a live run', () => {
  it('tells the root planner once when its goal file is edited mid-run', async () => {
    const running = startRun('sim?seed=3&latency=50..150', 3);
    // The root planner has published and waits for handoffs when the first work lands.
    await waitForLoggedEvent(stateDir, (event) => event.type === 'merge.landed');
    const added = 'Keep every helper free of side effects.';
    writeFileSync(goalPath, `${readFileSync(goalPath, 'utf8')}${added}\n`);
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true } });

    const events = readLoggedEvents(stateDir);
    const rootAgent = ofType(events, 'agent.started').find((event) => event.data.role === 'root-planner');
    const rootTask = rootAgent?.data.taskId;
    expect(ofType(events, 'goal.changed').map((event) => ({ ...event.data, goal: undefined }))).toEqual([{ path: goalPath, added: 1, removed: 0, goal: undefined }]);
    const sent = ofType(events, 'message.sent');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.data).toMatchObject({ recipientTaskId: rootTask, text: expect.stringContaining(`Added lines (1):\n+ ${added}`) });
    const received = ofType(events, 'message.received').filter((event) => event.agentId === rootAgent?.agentId && event.data.fromTaskId === null);
    expect(received).toHaveLength(1);
    expect(received[0]?.data.content).toContain(`The goal file ${goalPath} was edited while you work: 1 line(s) added, 0 removed.`);
    expect(received[0]?.data.content).toContain(`----- the goal, as it is now -----`);
    expect(received[0]?.data.inboxSeq).toBe(sent[0]?.data.inboxSeq);
    expect(sent[0]?.seq ?? 0).toBeLessThan(received[0]?.seq ?? 0);
  }, TEST_TIMEOUT_MS);

  it('takes `colony say` from another process to a sub-planner by its agent id, and refuses a worker, an unknown id and no run', async () => {
    // Nine modules in one folder: the sim's root planner delegates that folder to a sub-planner.
    const goal = readFileSync(goalPath, 'utf8')
      .replaceAll('src/numbers/', 'src/more/')
      .replace(/src\/strings\/(words|palindrome|template)\.js/g, 'src/more/$1.js');
    writeFileSync(goalPath, goal);
    const running = startRun('sim?seed=3&latency=100..250', 3);
    const subPlanner = await waitForLoggedEvent(stateDir, (event) => event.type === 'agent.started' && event.data.role === 'sub-planner');
    const workerTask = await waitForLoggedEvent(stateDir, (event) => event.type === 'task.created' && event.data.kind === 'worker');
    const text = 'Build words before template, please.';
    const [said, toWorker, toNobody] = await Promise.all([
      runColonyProcess(['say', text, '--to', subPlanner.agentId, '--repo', repo.dir], repo.dir),
      runColonyProcess(['say', 'Hurry up.', '--to', workerTask.type === 'task.created' ? workerTask.data.taskId : '', '--repo', repo.dir], repo.dir),
      runColonyProcess(['say', 'Hello?', '--to', 'planner-nobody', '--repo', repo.dir], repo.dir),
    ]);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toMatch(new RegExp(`^Sent to the sub-planner ${subPlanner.agentId} \\(task task-\\S+, "[^"]+"\\) of run run-\\S+: it reads it before its next model call\\.\\n$`));
    expect(toWorker.code).toBe(2);
    expect(toWorker.stderr).toContain('workers take no messages, they know only their task. Tell its planner instead: colony say');
    expect(toNobody.code).toBe(2);
    expect(toNobody.stderr).toContain('has no task or agent planner-nobody. Send to one of the planners at work');
    expect(toNobody.stderr).toMatch(/task-\S+ {2}planner-\S+ {2}root-planner {2}"toolbox"/);

    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    const events = readLoggedEvents(stateDir);
    const subTask = subPlanner.type === 'agent.started' ? subPlanner.data.taskId : '';
    const sent = ofType(events, 'message.sent');
    expect(sent.map((event) => event.data)).toEqual([{ recipientTaskId: subTask, text, inboxSeq: expect.any(Number) as number }]);
    const received = ofType(events, 'message.received').filter((event) => event.data.fromTaskId === null);
    expect(received.map((event) => [event.agentId, event.data.content])).toEqual([[subPlanner.agentId, `Message from the user:\n${text}`]]);
    expect(sent[0]?.seq ?? 0).toBeLessThan(received[0]?.seq ?? 0);

    const ended = await runColonyProcess(['say', 'Anyone?', '--repo', repo.dir], repo.dir);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toMatch(/has ended \(done\): there is no planner to tell/);
    const empty = mkdtempSync(join(tmpdir(), 'colony-no-run-'));
    try {
      const none = await runCli(['say', 'Hello?', '--state', empty]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain(`there is no run in ${empty}`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, TEST_TIMEOUT_MS);

  it('claims nothing between `colony andon` and `colony andon --release` from another process, and the run ends done after', async () => {
    const running = startRun('sim?seed=5&latency=50..150', 2);
    await waitForLoggedEvent(stateDir, (event) => event.type === 'task.claimed' && event.data.kind === 'worker');
    const held = await runColonyProcess(['andon', '--reason', 'reviewing main', '--repo', repo.dir], repo.dir);
    expect(held.code, held.stderr).toBe(0);
    expect(held.stdout).toMatch(/^Spawning paused across run run-\S+: no task is claimed until you run colony andon --release; agents already running go on\.\n$/);
    const holdEvent = await waitForLoggedEvent(stateDir, (event) => event.type === 'andon.changed' && event.data.taskId === null && event.data.paused);
    const status = await runCli(['status', '--repo', repo.dir]);
    expect(status.stdout).toContain('Spawning paused by you: reviewing main — release with colony andon --release');
    // Long enough for the workers that were running to hand off, and for the runner to claim many times over.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const released = await runColonyProcess(['andon', '--release', '--repo', repo.dir], repo.dir);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toMatch(/^Spawning released across run run-\S+: its tasks are claimed again\.\n$/);

    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(stateDir);
    const releaseEvent = events.find((event) => event.type === 'andon.changed' && event.data.taskId === null && !event.data.paused);
    expect(releaseEvent).toMatchObject({ data: { reason: 'released by the user', by: 'user' } });
    const during = events.filter((event) => event.seq > holdEvent.seq && event.seq < (releaseEvent?.seq ?? 0));
    expect(during.filter((event) => event.type === 'task.claimed')).toEqual([]);
    // Agents already running went on, and the tasks held back were claimed once it was released.
    expect(during.some((event) => event.type === 'handoff.delivered')).toBe(true);
    expect(events.filter((event) => event.type === 'task.claimed' && event.seq > (releaseEvent?.seq ?? 0)).length).toBeGreaterThan(0);
  }, TEST_TIMEOUT_MS);

  it('keeps the hold and a message left while the run was stopped through `colony resume`', async () => {
    const stop = new AbortController();
    const running = runCli(['run', goalPath, '--repo', repo.dir, '--model', 'sim?seed=4&latency=20..60', '--workers', '3', '--quiet'], { signal: stop.signal });
    await waitForLoggedEvent(stateDir, (event) => event.type === 'merge.landed');
    stop.abort();
    expect((await running).code).toBe(1);

    // No run goes: each command records what it did in the log itself.
    const held = await runColonyProcess(['andon', '--reason', 'over lunch', '--repo', repo.dir], repo.dir);
    expect(held.stdout).toContain('The run is not running now; this holds when you continue it with colony resume.');
    const again = await runCli(['andon', '--reason', 'over lunch', '--repo', repo.dir, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ paused: true, reason: 'over lunch', changed: false, live: false });
    const text = 'Numbers next, please.';
    const said = await runColonyProcess(['say', text, '--repo', repo.dir], repo.dir);
    expect(said.stdout).toMatch(/^Sent to the root planner planner-\S+ \(task task-\S+, "toolbox"\) of run run-\S+: the run is not running, so it reads it when you continue the run with colony resume\.\n$/);
    const stopped = readLoggedEvents(stateDir);
    const stoppedAt = stopped.findLast((event) => event.type === 'run.ended')?.seq ?? 0;
    expect(stopped.filter((event) => event.seq > stoppedAt).map((event) => event.type)).toEqual(['andon.changed', 'message.sent']);

    const resuming = runCli(['resume', '--repo', repo.dir]);
    const resumed = await waitForLoggedEvent(stateDir, (event) => event.type === 'run.resumed');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(readLoggedEvents(stateDir).filter((event) => event.seq > resumed.seq && event.type === 'task.claimed')).toEqual([]);
    expect((await runColonyProcess(['andon', '--release', '--repo', repo.dir], repo.dir)).code).toBe(0);
    const result = await resuming;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('colony resume: spawning is paused by you (over lunch): no task starts until colony andon --release');

    const events = readLoggedEvents(stateDir);
    const release = events.find((event) => event.type === 'andon.changed' && event.seq > resumed.seq);
    expect(release).toMatchObject({ data: { taskId: null, paused: false, by: 'user' } });
    const firstClaim = events.find((event) => event.type === 'task.claimed' && event.seq > resumed.seq);
    expect(firstClaim?.seq ?? 0).toBeGreaterThan(release?.seq ?? Infinity);
    const received = ofType(events, 'message.received').filter((event) => event.data.fromTaskId === null);
    expect(received.map((event) => event.data.content)).toEqual([`Message from the user:\n${text}`]);
    expect(ofType(events, 'message.sent')).toHaveLength(1);
  }, TEST_TIMEOUT_MS);
});
