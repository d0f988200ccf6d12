import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { runSettingsFixture } from '../../events/testing/run-settings-fixture.js';
import { foldRunStatus } from './run-status.js';
import { formatRunStatus } from './format-run-status.js';
import { type RunStatus } from './types.js';
import { greenAdvanced, greenBisected, greenBlocked, greenChecked, greenReported } from '../testing/green-events.js';
import { openScriptedRun, SCRIPT_T0 } from '../testing/scripted-run.js';

const commit = (letter: string) => letter.repeat(40);
const second = (seconds: number) => SCRIPT_T0 + seconds * 1000;
const GREEN_SETTINGS = { check: null, everyCommits: 5, everyMs: null, branch: 'green', tag: false, checkTimeoutMs: 600_000 };

function scriptedRun() {
  const { store, run, clock } = openScriptedRun();
  return {
    run,
    at(seconds: number): void {
      clock.now = second(seconds);
    },
    record(seconds: number, body: EventBody): void {
      clock.now = second(seconds);
      run.append('system', body);
    },
    land(seconds: number, letter: string): void {
      clock.now = second(seconds);
      run.land('worker-1', commit(letter), ['src/parser.ts']);
    },
    async status(now: number): Promise<RunStatus> {
      const status = foldRunStatus({ events: await store.read(), tasks: [], deliveredHandoffs: [], now });
      if (status === null) throw new Error('expected a run');
      return status;
    },
  };
}

/** Main green at a, red from b until c landed 41 s later, then red again from d to the latest event (1000 s); green blocked meanwhile. */
function redTwice() {
  const script = scriptedRun();
  const { record, land } = script;
  record(0, { type: 'run.configured', data: { settings: runSettingsFixture({ green: GREEN_SETTINGS }) } });
  land(100, 'a');
  record(200, greenChecked(commit('a'), true));
  record(210, greenAdvanced(commit('a')));
  land(300, 'b');
  record(320, greenChecked(commit('b'), false));
  record(330, greenBisected(commit('b'), commit('b'), { taskId: 'task-b', agentId: 'worker-b', plannerTaskId: 'task-root' }));
  record(335, greenReported(commit('b'), 'task-root'));
  land(341, 'c');
  record(400, greenChecked(commit('c'), true));
  record(410, greenBlocked(commit('c'), 'green has commits main does not'));
  land(700, 'd');
  record(800, greenChecked(commit('d'), false, { failure: 'not ok 7 - prints' }));
  record(850, greenBisected(commit('d'), commit('d'), { taskId: 'task-d' }));
  record(860, greenReported(commit('d'), 'task-root', 'not ok 7 - prints'));
  script.at(1000);
  script.run.step('worker-2', 1, 'read_file', { path: 'README.md' }, 'hello');
  return script;
}

describe('the green branch in the status', () => {
  it('is null for a run with no green loop, and says so in no line', async () => {
    const { status } = scriptedRun();
    expect((await status(second(10))).green).toBeNull();
    expect(formatRunStatus(await status(second(10)))).not.toContain('Green');
  });

  it('is there, empty, for a run whose settings have a green loop before its first snapshot', async () => {
    const { record, status } = scriptedRun();
    record(1, { type: 'run.configured', data: { settings: runSettingsFixture({ green: GREEN_SETTINGS }) } });
    expect((await status(second(10))).green).toMatchObject({ commit: null, snapshots: 0, redShare: 0, meanTimeToGreenS: null, branch: 'green', redNow: false });
    expect(formatRunStatus(await status(second(10)))).toContain('\nGreen: not moved in this run (no snapshot yet)\n');
  });

  it('gives where green points, how often and how long main was red, and whether it is red now, as JSON and as lines', async () => {
    const { status } = redTwice();
    // Later clocks change nothing: red time runs to the run's latest event, so a replay at the end reads the same.
    const now = await status(second(5000));
    expect(now.green).toEqual({
      commit: commit('a'),
      redShare: 0.341,
      snapshots: 4,
      meanTimeToGreenS: 41,
      redSnapshots: 2,
      redNow: true,
      since: second(700),
      failures: 2,
      bisects: 2,
      branch: 'green',
      blocked: 'green has commits main does not',
      lastSnapshot: { commit: commit('d'), passed: false, at: second(800), trigger: 'landings' },
    });
    expect((await status(second(1000))).green).toEqual(now.green);
    const text = formatRunStatus(await status(second(1000)));
    expect(text).toContain(
      [
        'Commits landed: 4',
        'Green: aaaaaaaaaaaa (4 snapshots, 2 red; main red 34% of the time, back to green in 41 s on average)',
        '  Main is red now, since 2026-11-30T09:11:40Z (5m 00s)',
        '  2 distinct failure(s) reported to planners, 2 bisect(s)',
        '  Branch green is blocked: green has commits main does not',
        'Tokens: ',
      ].join('\n'),
    );
  });

  it('says main was red when the run ended, and drops the block once green moves', async () => {
    const { record, land, run, status } = redTwice();
    land(1100, 'e');
    record(1150, greenChecked(commit('e'), true));
    record(1160, greenAdvanced(commit('e'), commit('a')));
    const green = await status(second(1200));
    expect(green.green).toMatchObject({ commit: commit('e'), redNow: false, since: null, blocked: null, meanTimeToGreenS: 220.5 });
    expect(formatRunStatus(green)).toContain('\nGreen: eeeeeeeeeeee (5 snapshots, 2 red; main red 38% of the time, back to green in 3m 40s on average)\n  2 distinct');
    land(1300, 'f');
    record(1400, greenChecked(commit('f'), false, { trigger: 'release' }));
    run.tick(100_000);
    run.endRun('done');
    const ended = formatRunStatus(await status(second(9000)));
    expect(ended).toContain('\n  Main was red when the run ended, since 2026-11-30T09:23:20Z (1m 40s)\n');
  });
});
