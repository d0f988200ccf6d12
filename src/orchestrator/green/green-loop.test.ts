import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import type { EventStore } from '../../store/events/event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { handoffOf } from '../../store/testing/task-store-fixtures.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { unconfinedCommandRunners } from '../setup/command-sandbox.js';
import { startGreenLoop } from './green-loop.js';
import { fixedDependencyLayer } from '../setup/dependency-layers.js';
import { type GreenLoop, type GreenSnapshot } from './types.js';
import { defaultPromptSet } from '../prompts/prompt-set.js';
import { Wakeups } from '../wakeups.js';
import { greenFailureLines } from '../../sim/reading/green-protocol.js';
import { GREEN_FAILURES_HEADING, GREEN_FIXUP_OPENING, RELEASE_REFUSED_OPENING } from '../../protocol/message-openings.js';
import { DEFAULT_GREEN_SETTINGS, type GreenSettings } from '../../events/run-settings.js';

/**
 * The project's check, as a test runner prints it: one TAP line per module, `not ok` for each
 * module whose file says BROKEN. Every module is checked, so two breaks show as two failures.
 */
const CHECK_SCRIPT = `#!/bin/sh
status=0
for file in src/*.txt; do
  name=$(basename "$file" .txt)
  if grep -q BROKEN "$file"; then echo "not ok - $name works"; status=1; else echo "ok - $name works"; fi
done
exit $status
`;

const RUN_ID = 'run-green';
const ROOT = 'task-root';

describe('the green loop', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let dir: string;
  let tasks: TaskStore;
  let events: EventStore;
  let recorded: RecordedEvent[];
  let loop: GreenLoop | null;
  let base: string;

  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'check.sh': CHECK_SCRIPT, 'src/alpha.txt': 'alpha\n', 'src/beta.txt': 'beta\n', 'src/gamma.txt': 'gamma\n' });
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    base = (await temporary.git(['rev-parse', 'main'])).trim();
    dir = mkdtempSync(join(tmpdir(), 'colony-green-loop-'));
    tasks = openSqliteTaskStore(join(dir, 'colony.db'));
    events = createMemoryEventStore();
    recorded = [];
    loop = null;
    await tasks.createTask({ id: ROOT, runId: RUN_ID, parentTaskId: null, createdBy: null, kind: 'planner', title: 'Goal', body: 'the goal', scope: null, retryOf: null }, 1);
    await tasks.createTask({ id: 'task-sub', runId: RUN_ID, parentTaskId: ROOT, createdBy: 'root-planner', kind: 'planner', title: 'Own src/', body: 'src', scope: 'src/', retryOf: null }, 2);
    // Both planners are at work: claimed, so their tasks are running.
    await tasks.claim({ runId: RUN_ID, holder: 'runner', kinds: ['planner'], now: 3, leaseMs: 3_600_000 });
    await tasks.claim({ runId: RUN_ID, holder: 'runner', kinds: ['planner'], now: 4, leaseMs: 3_600_000 });
  });

  afterEach(async () => {
    await loop?.stop();
    await tasks.close();
    rmSync(dir, { recursive: true, force: true });
    await temporary.remove();
  });

  function record(body: EventBody, agentId = 'system'): void {
    recorded.push(events.append({ ...body, runId: RUN_ID, agentId }));
  }

  async function start(settings: Partial<GreenSettings> = {}): Promise<GreenLoop> {
    loop = await startGreenLoop({
      runId: RUN_ID,
      repo,
      events,
      tasks,
      rootTaskId: ROOT,
      viewsDir: join(dir, 'views'),
      commands: unconfinedCommandRunners(),
      dependencyLayers: fixedDependencyLayer(null),
      prompts: defaultPromptSet(),
      settings: { ...DEFAULT_GREEN_SETTINGS, check: 'sh check.sh', everyCommits: null, everyMs: null, ...settings },
      record: (body) => record(body),
      flush: () => events.flush(),
      goal: async () => 'the goal',
      base,
      parallel: 2,
      wakeups: new Wakeups(),
      now: Date.now,
      signal: new AbortController().signal,
    });
    return loop;
  }

  /** A worker task of `planner` lands one commit that writes `text` into src/<module>.txt, recorded as colony records a merge. */
  async function land(planner: string, module: string, text: string): Promise<{ commit: string; taskId: string }> {
    const before = (await temporary.git(['rev-parse', 'main'])).trim();
    const taskId = `task-${module}-${recorded.length}`;
    const agentId = `worker-${module}-${recorded.length}`;
    await tasks.createTask({ id: taskId, runId: RUN_ID, parentTaskId: planner, createdBy: 'planner', kind: 'worker', title: `Build ${module}`, body: 'b', scope: null, retryOf: null }, 10);
    record({ type: 'agent.started', data: { role: 'worker', taskId, title: `Build ${module}`, model: 'sim', systemPrompt: '', task: 'b', tools: [] } }, agentId);
    await temporary.write(`src/${module}.txt`, text);
    const commit = await temporary.commitAll(`Change ${module}`);
    record({ type: 'merge.landed', data: { commit, mainBefore: before, attempts: 1, files: [`src/${module}.txt`], durationMs: 1 } }, agentId);
    return { commit, taskId };
  }

  /** A snapshot the loop took now; anything but a check is a failure of the test. */
  async function snapshotOf(green: GreenLoop): Promise<GreenSnapshot> {
    const outcome = await green.checkNow();
    if (outcome.kind !== 'checked') throw new Error(`expected a snapshot, got ${outcome.kind}`);
    return outcome.snapshot;
  }

  const ofType = <T extends RecordedEvent['type']>(type: T) => recorded.filter((event): event is Extract<RecordedEvent, { type: T }> => event.type === type);
  /** colony's own messages to the planner since the last look (handoffs left out). */
  const inbox = async (taskId: string) => (await tasks.takeInbox(taskId)).filter((message) => message.sender === 'colony');

  it('moves green to passing snapshots only, fast-forward, and tags them when asked', async () => {
    const green = await start({ tag: true });
    await land('task-sub', 'alpha', 'alpha 2\n');
    const passing = (await temporary.git(['rev-parse', 'main'])).trim();
    expect((await snapshotOf(green))?.check.passed).toBe(true);
    expect((await temporary.git(['rev-parse', 'refs/heads/green'])).trim()).toBe(passing);
    expect((await temporary.git(['rev-parse', 'refs/tags/green-1'])).trim()).toBe(passing);

    await land('task-sub', 'beta', 'BROKEN\n');
    expect((await snapshotOf(green))?.check.passed).toBe(false);
    // Red: green stays on the last passing commit.
    expect((await temporary.git(['rev-parse', 'refs/heads/green'])).trim()).toBe(passing);
    expect(ofType('green.advanced').map((event) => event.data)).toEqual([{ branch: 'green', from: null, to: passing, tag: 'green-1' }]);
  });

  it('bisects two breaks between snapshots to their own commits and tells each owner once, however many snapshots stay red', async () => {
    const green = await start();
    await land('task-sub', 'alpha', 'alpha 2\n');
    expect((await snapshotOf(green))?.check.passed).toBe(true);
    const good = (await temporary.git(['rev-parse', 'main'])).trim();

    await land('task-sub', 'alpha', 'alpha 3\n');
    const breakBeta = await land('task-sub', 'beta', 'BROKEN beta\n');
    await land('task-sub', 'alpha', 'alpha 4\n');
    const breakGamma = await land(ROOT, 'gamma', 'BROKEN gamma\n');
    await land('task-sub', 'alpha', 'alpha 5\n');
    const red = await snapshotOf(green);
    expect(red?.check.failures).toEqual(['not ok - beta works', 'not ok - gamma works']);

    const bisected = ofType('green.bisected').map((event) => event.data);
    expect(bisected.map((data) => [data.firstBad, data.taskId, data.plannerTaskId, data.failures, data.known])).toEqual([
      [breakBeta.commit, breakBeta.taskId, 'task-sub', ['not ok - beta works'], false],
      [breakGamma.commit, breakGamma.taskId, ROOT, ['not ok - gamma works'], false],
    ]);
    expect(bisected[0]?.good).toBe(good);
    // One fix-up message each, to the planner that owns the commit's task, in the words the sim reads.
    const toSub = await inbox('task-sub');
    const toRoot = await inbox(ROOT);
    expect(toSub).toHaveLength(1);
    expect(toRoot).toHaveLength(1);
    expect(toSub[0]?.sender).toBe('colony');
    expect(toSub[0]?.text?.startsWith(GREEN_FIXUP_OPENING)).toBe(true);
    expect(toSub[0]?.text).toContain(`${GREEN_FAILURES_HEADING}\n- not ok - beta works\n`);
    expect(greenFailureLines(toSub[0]?.text ?? '')).toEqual(['not ok - beta works']);
    expect(toSub[0]?.text).toContain(breakBeta.commit.slice(0, 12));
    expect(toSub[0]?.text).toContain(`task ${breakBeta.taskId} "Build beta"`);
    expect(greenFailureLines(toRoot[0]?.text ?? '')).toEqual(['not ok - gamma works']);

    // Still red with the same failures, and red again once one is fixed: no second message.
    await land('task-sub', 'alpha', 'alpha 6\n');
    expect((await snapshotOf(green))?.check.passed).toBe(false);
    await land('task-sub', 'beta', 'beta fixed\n');
    const onlyGamma = await snapshotOf(green);
    expect(onlyGamma?.check.failures).toEqual(['not ok - gamma works']);
    expect(onlyGamma?.open.map((failure) => failure.key)).toEqual([breakGamma.commit]);
    expect(await inbox('task-sub')).toEqual([]);
    expect(await inbox(ROOT)).toEqual([]);
    expect(ofType('green.reported')).toHaveLength(2);

    // A break that comes back after its fix is a new failure: bisected and told again.
    await land('task-sub', 'gamma', 'gamma fixed\n');
    expect((await snapshotOf(green))?.check.passed).toBe(true);
    const again = await land('task-sub', 'beta', 'BROKEN beta again\n');
    await snapshotOf(green);
    expect(ofType('green.bisected').at(-1)?.data.firstBad).toBe(again.commit);
    expect(await inbox('task-sub')).toHaveLength(1);

    // The green branch only ever pointed at commits whose check passed.
    const passed = new Set(ofType('green.checked').flatMap((event) => (event.data.passed ? [event.data.commit] : [])));
    expect(ofType('green.advanced').every((event) => passed.has(event.data.to))).toBe(true);
  });

  it('tells again of a failure fixed while main stayed red and brought back by a later commit', async () => {
    const green = await start();
    await land('task-sub', 'alpha', 'alpha 2\n');
    expect((await snapshotOf(green)).check.passed).toBe(true);
    await land('task-sub', 'beta', 'BROKEN beta\n');
    await land(ROOT, 'gamma', 'BROKEN gamma\n');
    await snapshotOf(green);
    expect(ofType('green.reported')).toHaveLength(2);
    // beta is fixed; gamma keeps main red, so no pass comes between.
    await land('task-sub', 'beta', 'beta fixed\n');
    expect((await snapshotOf(green)).check.failures).toEqual(['not ok - gamma works']);
    const again = await land('task-sub', 'beta', 'BROKEN beta again\n');
    await snapshotOf(green);
    expect(ofType('green.bisected').at(-1)?.data).toMatchObject({ firstBad: again.commit, taskId: again.taskId, known: false });
    expect(ofType('green.reported')).toHaveLength(3);

    // A restart folds the same back from the log: still nothing told twice.
    await green.stop();
    const restarted = await start();
    await land('task-sub', 'alpha', 'alpha 3\n');
    await snapshotOf(restarted);
    expect(ofType('green.reported')).toHaveLength(3);
  });

  it('tells the nearest planner still at work when the owner has finished, and says a failure that predates the run', async () => {
    // main is red before the run starts: the failure is nobody's task, and the root planner hears of it.
    await temporary.write('src/alpha.txt', 'BROKEN from before\n');
    base = await temporary.commitAll('Broken before the run');
    const green = await start();
    await land('task-sub', 'beta', 'beta 2\n');
    await snapshotOf(green);
    expect(ofType('green.bisected').map((event) => [event.data.firstBad, event.data.taskId])).toEqual([[null, null]]);
    expect(greenFailureLines((await inbox(ROOT))[0]?.text ?? '')).toEqual(['not ok - alpha works']);

    // The sub-planner's task has ended: its break goes to the root planner.
    const broken = await land('task-sub', 'gamma', 'BROKEN gamma\n');
    const completed = await tasks.complete('task-sub', { holder: 'runner', attempt: 1 }, handoffOf('done', 'src built'), Date.now());
    expect(completed.ok).toBe(true);
    await snapshotOf(green);
    const reported = ofType('green.reported').at(-1)?.data;
    expect(reported).toMatchObject({ firstBad: broken.commit, plannerTaskId: 'task-sub', recipientTaskId: ROOT });
    expect(greenFailureLines((await inbox(ROOT))[0]?.text ?? '')).toEqual(['not ok - gamma works']);
  });

  it('refuses the release while main fails, naming what broke it, and passes it once main is fixed', async () => {
    const green = await start();
    const broken = await land('task-sub', 'beta', 'BROKEN\n');
    const refused = await green.release();
    expect(refused.passed).toBe(false);
    expect(refused.refusal?.startsWith(RELEASE_REFUSED_OPENING)).toBe(true);
    expect(greenFailureLines(refused.refusal ?? '')).toEqual(['not ok - beta works']);
    expect(refused.refusal).toContain(broken.commit.slice(0, 12));
    // A failing release is checked again (a flaky check may pass), and its failure is not told twice.
    const checks = ofType('green.checked').length;
    expect((await green.release()).passed).toBe(false);
    expect(ofType('green.checked')).toHaveLength(checks + 1);
    expect(ofType('green.reported')).toHaveLength(1);

    await land('task-sub', 'beta', 'beta fixed\n');
    const released = await green.release();
    expect(released).toMatchObject({ passed: true, stopped: false, refusal: null, check: { command: 'sh check.sh', passed: true } });
    expect(ofType('green.checked').at(-1)?.data.trigger).toBe('release');
    // A pass of the same commit is kept: the run's end does not check it again.
    const passes = ofType('green.checked').length;
    expect(await green.release()).toBe(released);
    expect(ofType('green.checked')).toHaveLength(passes);
  });

  it('snapshots after the set number of landings, by itself', async () => {
    const green = await start({ everyCommits: 2 });
    await land('task-sub', 'alpha', 'alpha 2\n');
    green.observe(recorded.at(-1) as RecordedEvent);
    await land('task-sub', 'alpha', 'alpha 3\n');
    green.observe(recorded.at(-1) as RecordedEvent);
    const deadline = Date.now() + 30_000;
    while (ofType('green.checked').length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ofType('green.checked').map((event) => [event.data.trigger, event.data.landed, event.data.passed])).toEqual([['landings', 2, true]]);
  });

  it('picks up after a restart from the log: a failure told before is not told again, and the last pass is still the floor', async () => {
    const first = await start();
    await land('task-sub', 'alpha', 'alpha 2\n');
    expect((await snapshotOf(first))?.check.passed).toBe(true);
    const good = (await temporary.git(['rev-parse', 'main'])).trim();
    const broken = await land('task-sub', 'beta', 'BROKEN\n');
    await snapshotOf(first);
    expect(await inbox('task-sub')).toHaveLength(1);
    await first.stop();

    // The run's process died and came back: a new loop over the same log and repository.
    const second = await start();
    await land('task-sub', 'alpha', 'alpha 3\n');
    const stillRed = await snapshotOf(second);
    expect(stillRed?.open.map((failure) => [failure.key, failure.report?.culprit.taskId])).toEqual([[broken.commit, broken.taskId]]);
    expect(await inbox('task-sub')).toEqual([]);
    expect(ofType('green.bisected')).toHaveLength(1);
    // A new break after the restart is bisected from the pass before it, and told.
    const gamma = await land(ROOT, 'gamma', 'BROKEN gamma\n');
    await snapshotOf(second);
    expect(ofType('green.bisected').at(-1)?.data).toMatchObject({ firstBad: gamma.commit, good });
    expect(await inbox(ROOT)).toHaveLength(1);
  });

  it('gives no verdict when the run stops during the release, and refuses one whose check could not run', async () => {
    const stopping = new AbortController();
    loop = await startGreenLoop({
      runId: RUN_ID, repo, events, tasks, rootTaskId: ROOT, viewsDir: join(dir, 'views'), commands: unconfinedCommandRunners(), dependencyLayers: fixedDependencyLayer(null),
      prompts: defaultPromptSet(), settings: { ...DEFAULT_GREEN_SETTINGS, check: 'sleep 30', everyCommits: null, everyMs: null },
      record: (body) => record(body), flush: () => events.flush(), goal: async () => 'the goal', base, parallel: 1, wakeups: new Wakeups(), now: Date.now, signal: stopping.signal,
    });
    const release = loop.release();
    setTimeout(() => stopping.abort(new Error('Ctrl-C')), 300);
    expect(await release).toEqual({ passed: false, stopped: true, check: null, refusal: null });
    expect(ofType('green.checked')).toEqual([]);
    await loop.stop();

    // A views folder git cannot make a view in: the check never ran, and the release says so.
    writeFileSync(join(dir, 'not-a-folder'), 'a file');
    loop = await startGreenLoop({
      runId: RUN_ID, repo, events, tasks, rootTaskId: ROOT, viewsDir: join(dir, 'not-a-folder'), commands: unconfinedCommandRunners(), dependencyLayers: fixedDependencyLayer(null),
      prompts: defaultPromptSet(), settings: { ...DEFAULT_GREEN_SETTINGS, check: 'sh check.sh', everyCommits: null, everyMs: null },
      record: (body) => record(body), flush: () => events.flush(), goal: async () => 'the goal', base, parallel: 1, wakeups: new Wakeups(), now: Date.now, signal: new AbortController().signal,
    });
    const unchecked = await loop.release();
    expect(unchecked).toMatchObject({ passed: false, stopped: false, check: null });
    expect(unchecked.refusal?.startsWith(RELEASE_REFUSED_OPENING)).toBe(true);
    expect(unchecked.refusal).toContain('could not run the release check');
    expect(ofType('green.blocked').at(-1)?.data.reason).toMatch(/^the check could not run: /);
  });

});
