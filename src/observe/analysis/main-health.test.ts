import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { analyzeRun } from './run-analysis.js';
import { formatRunAnalysis } from './format-run-analysis.js';
import { greenAdvanced, greenBisected, greenChecked, greenReported } from '../testing/green-events.js';
import { openScriptedRun, SCRIPT_T0 } from '../testing/scripted-run.js';

const commit = (letter: string) => letter.repeat(40);

/** Green at a; b and c break two tests, both bisected and reported (b twice); d fixes them; main turns red again at e and stays so. */
function greenRun() {
  const { store, run, clock } = openScriptedRun();
  const at = (seconds: number) => {
    clock.now = SCRIPT_T0 + seconds * 1000;
  };
  const record = (seconds: number, body: EventBody) => {
    at(seconds);
    run.append('system', body);
  };
  const land = (seconds: number, letter: string, agentId = 'worker-1') => {
    at(seconds);
    run.land(agentId, commit(letter), ['src/parser.ts']);
  };
  land(100, 'a');
  record(150, greenChecked(commit('a'), true));
  record(160, greenAdvanced(commit('a')));
  land(200, 'b', 'worker-b');
  land(300, 'c', 'worker-c');
  record(400, greenChecked(commit('c'), false));
  record(410, greenBisected(commit('c'), commit('b'), { taskId: 'task-b', agentId: 'worker-b', plannerTaskId: 'task-root' }));
  record(420, greenReported(commit('b'), 'task-root'));
  record(430, greenBisected(commit('c'), commit('c'), { taskId: 'task-c', agentId: 'worker-c', plannerTaskId: 'task-sub', failure: 'not ok 4 - prints' }));
  record(440, greenReported(commit('c'), 'task-sub', 'not ok 4 - prints'));
  record(450, greenBisected(commit('c'), commit('b'), { taskId: 'task-b', known: true }));
  land(500, 'd');
  record(600, greenChecked(commit('d'), true));
  record(610, greenAdvanced(commit('d'), commit('a')));
  land(700, 'e', 'worker-e');
  record(800, greenChecked(commit('e'), false));
  record(810, greenBisected(commit('e'), commit('e'), { taskId: 'task-e', agentId: 'worker-e', plannerTaskId: 'task-root', failure: 'not ok 9 - reads files' }));
  at(1000);
  run.endRun('done');
  return store;
}

describe('main health in the analysis', () => {
  it('adds the green snapshots, the bisects with their first bad commits and tasks, the failures, the red share and the time back to green', async () => {
    const { mainHealth } = analyzeRun(await greenRun().read());
    expect(mainHealth.snapshots).toEqual({ runs: 4, failed: 2, share: 0.5 });
    expect(mainHealth.all).toEqual({ runs: 4, failed: 2, share: 0.5 });
    // Red from b (200 s) to d (500 s), and from e (700 s) to the end (1000 s): 600 of 1000 s.
    expect(mainHealth.green).toMatchObject({
      commit: commit('d'),
      redShare: 0.6,
      meanTimeToGreenS: 300,
      redNow: true,
      since: SCRIPT_T0 + 700_000,
      failures: 2,
      bisects: 4,
      commitsBetweenGreen: [3],
    });
    expect(mainHealth.green?.bisected.map((bisect) => [bisect.firstBad?.slice(0, 1), bisect.taskId, bisect.agentId, bisect.plannerTaskId, bisect.failures, bisect.known])).toEqual([
      ['b', 'task-b', 'worker-b', 'task-root', ['not ok 1 - parses numbers'], false],
      ['c', 'task-c', 'worker-c', 'task-sub', ['not ok 4 - prints'], false],
      ['b', 'task-b', null, null, ['not ok 1 - parses numbers'], true],
      ['e', 'task-e', 'worker-e', 'task-root', ['not ok 9 - reads files'], false],
    ]);
  });

  it("counts the release snapshot once, though it is also the run's check of main", async () => {
    const store = greenRun();
    const last = (await store.read()).at(-1);
    const release = greenChecked(commit('e'), false, { trigger: 'release', failure: 'not ok 9 - reads files' });
    store.append({ ...release, runId: last?.runId ?? '', agentId: 'system' });
    store.append({ type: 'main.checked', data: { command: 'node --test', commit: commit('e'), passed: false, exitCode: 1, timedOut: false, durationMs: 4_000, outputTail: 'not ok 9' }, runId: last?.runId ?? '', agentId: 'system' });
    const { mainHealth } = analyzeRun(await store.read());
    expect(mainHealth.snapshots).toEqual({ runs: 5, failed: 3, share: 0.6 });
    expect(mainHealth.main).toEqual({ runs: 1, failed: 1, share: 1 });
    expect(mainHealth.all).toEqual({ runs: 5, failed: 3, share: 0.6 });
  });

  it('prints them under how often main was red', async () => {
    const text = formatRunAnalysis(analyzeRun(await greenRun().read()));
    const section = text.slice(text.indexOf('How often main was red:'));
    expect(section).toMatch(/\n {2}green snapshots +4 +2 +50%\n {2}all +4 +2 +50%\n/);
    expect(section).toContain(
      [
        'Green branch green is at dddddddddddd: main red 60% of the run, back to green in 5m 00s on average',
        'Main was red at the end of the log, since 2026-11-30T09:11:40.000Z',
        'Distinct failures reported to planners: 2; bisects: 4',
        '  FIRST BAD     TASK    AGENT     PLANNER    FAILURE',
        '  bbbbbbbbbbbb  task-b  worker-b  task-root  not ok 1 - parses numbers',
        '  cccccccccccc  task-c  worker-c  task-sub   not ok 4 - prints',
        '  bbbbbbbbbbbb  task-b  -         -          not ok 1 - parses numbers (known)',
        '  eeeeeeeeeeee  task-e  worker-e  task-root  not ok 9 - reads files',
        'Commits landed between green points: 3.0 on average, at most 3 (1 move(s) of green)',
      ].join('\n'),
    );
  });

  it('lists the latest twenty bisects of a long red stretch and counts them all', async () => {
    const { store, run } = openScriptedRun();
    run.append('system', greenChecked(commit('a'), false));
    for (let index = 0; index < 45; index += 1) run.append('system', greenBisected(commit('a'), `${index}`.padStart(40, '0'), { taskId: `task-${index}` }));
    const analysis = analyzeRun(await store.read());
    expect(analysis.mainHealth.green?.bisects).toBe(45);
    expect(analysis.mainHealth.green?.bisected.map((bisect) => bisect.taskId)).toEqual(Array.from({ length: 20 }, (_, index) => `task-${index + 25}`));
    expect(formatRunAnalysis(analysis)).toContain('Distinct failures reported to planners: 0; bisects: 45 (the latest 20 listed)\n');
  });

  it('leaves the green branch out of a run without a green loop', async () => {
    const { store } = openScriptedRun();
    const analysis = analyzeRun(await store.read());
    expect(analysis.mainHealth.green).toBeNull();
    expect(formatRunAnalysis(analysis)).not.toContain('Green branch');
  });
});
