import { describe, expect, it } from 'vitest';
import { runSettingsFixture } from '../events/testing/run-settings-fixture.js';
import type { EventBody } from '../events/event-types.js';
import { createGreenHealthFold, type GreenHealth } from './green-health.js';
import { greenAdvanced, greenBisected, greenBlocked, greenChecked, greenReported } from './testing/green-events.js';
import { openScriptedRun, SCRIPT_T0 } from './testing/scripted-run.js';

const commit = (letter: string) => letter.repeat(40);
const second = (seconds: number) => SCRIPT_T0 + seconds * 1000;

/** A scripted run (started at 0 s) and what to do at a second of it: land a commit, or record a green event. */
function timeline() {
  const { store, run, clock } = openScriptedRun();
  return {
    store,
    run,
    land(seconds: number, letter: string): void {
      clock.now = second(seconds);
      run.land('worker-1', commit(letter), ['src/parser.ts']);
    },
    record(seconds: number, body: EventBody): void {
      clock.now = second(seconds);
      run.append('system', body);
    },
    async health(): Promise<GreenHealth> {
      const fold = createGreenHealthFold();
      for (const event of await store.read()) fold.add(event);
      return fold.result();
    },
  };
}

describe('the green health of a run', () => {
  it('times main red from the first bad commit to the green commit, overlapping breaks as one, and counts a red period still open', async () => {
    const { land, record, health, run } = timeline();
    land(100, 'a');
    record(200, greenChecked(commit('a'), true));
    // b breaks one test, c lands on top, d breaks another while main is still red.
    land(300, 'b');
    land(400, 'c');
    record(500, greenChecked(commit('c'), false));
    record(560, greenBisected(commit('c'), commit('c'), { taskId: 'task-c' }));
    land(600, 'd');
    record(700, greenChecked(commit('d'), false, { failure: 'not ok 2 - prints' }));
    // The second bisect finds an earlier first bad commit: the period started there.
    record(760, greenBisected(commit('d'), commit('b'), { taskId: 'task-b' }));
    land(800, 'e');
    land(900, 'f');
    record(1000, greenChecked(commit('f'), true));
    record(1100, greenAdvanced(commit('f'), commit('a')));
    // Red from b (300 s) until f landed (900 s): 600 s.
    // The latest event is at 1100 s: 600 / 1100, to four places.
    expect(await health()).toMatchObject({ redShare: 0.5455, meanTimeToGreenS: 600, redNow: false, since: null, snapshots: 4, redSnapshots: 2, bisects: 2 });

    // g breaks and h fixes it before a snapshot sees it: main never showed red.
    land(1200, 'g');
    land(1300, 'h');
    record(1400, greenChecked(commit('h'), true));
    // A snapshot fails on a commit bisected to one that did not land in this run: red from the snapshot.
    record(1500, greenChecked(commit('h'), false, { trigger: 'request' }));
    record(1550, greenBisected(commit('h'), commit('z')));
    land(1600, 'i');
    record(1700, greenChecked(commit('i'), true));
    record(1750, greenAdvanced(commit('i'), commit('f')));
    // Red from 1500 s to 1600 s: 100 s. Then j breaks, and main is still red at the latest event (2000 s).
    land(1800, 'j');
    record(1900, greenChecked(commit('j'), false));
    record(1950, greenBisected(commit('j'), commit('j'), { taskId: 'task-j' }));
    run.tick(50_000);
    run.step('worker-2', 1, 'read_file', { path: 'README.md' }, 'hello');

    const going = await health();
    // 600 + 100 + 200 (1800 s to 2000 s) of 2000 s.
    expect(going).toEqual({
      commit: commit('i'),
      branch: 'green',
      snapshots: 8,
      redSnapshots: 4,
      redShare: 0.45,
      meanTimeToGreenS: 350,
      redNow: true,
      since: second(1800),
      failures: 0,
      bisects: 4,
      commitsBetweenGreen: [3],
      lastSnapshot: { commit: commit('j'), passed: false, at: second(1900), trigger: 'landings' },
      blocked: null,
    });

    // The run ends red at 2500 s: the open period counts to the end, and stays out of the mean.
    record(2500, { type: 'run.ended', data: { status: 'done', durationMs: 2_500_000 } });
    expect(await health()).toMatchObject({ redShare: 0.56, meanTimeToGreenS: 350, redNow: true, since: second(1800) });
  });

  it('starts a period at the run\'s start when main failed so from the start, and ends it at the snapshot when its commit landed elsewhere', async () => {
    const { land, record, health } = timeline();
    land(100, 'a');
    record(200, greenChecked(commit('a'), false));
    record(250, greenBisected(commit('a'), null));
    // The commit that passes was pushed outside the run: the period ends with its snapshot.
    record(400, greenChecked(commit('k'), true));
    record(500, greenAdvanced(commit('k')));
    expect(await health()).toMatchObject({ redShare: 0.8, meanTimeToGreenS: 400, redNow: false, redSnapshots: 1, commit: commit('k') });
  });

  it('never starts a red period before main was last seen green', async () => {
    const { land, record, health } = timeline();
    land(100, 'a');
    land(200, 'b');
    record(300, greenChecked(commit('b'), true));
    land(350, 'c');
    // A bisect naming a commit older than the green one cannot move the start before b landed.
    record(400, greenChecked(commit('c'), false));
    record(450, greenBisected(commit('c'), commit('a')));
    expect(await health()).toMatchObject({ redNow: true, since: second(200) });
    land(460, 'd');
    record(500, greenChecked(commit('d'), true));
    expect(await health()).toMatchObject({ redNow: false, meanTimeToGreenS: 260, redShare: 0.52 });
  });

  it('never ends a red period before it began: a fix that landed while the red check ran closes it at 0 s', async () => {
    const { land, record, health } = timeline();
    land(100, 'a');
    land(250, 'b');
    record(300, greenChecked(commit('a'), false));
    record(400, greenChecked(commit('b'), true));
    expect(await health()).toMatchObject({ redSnapshots: 1, redNow: false, meanTimeToGreenS: 0, redShare: 0 });
  });

  it('counts the commits landed between green points, reports, and a blocked branch until it moves again', async () => {
    const { land, record, health } = timeline();
    land(10, 'a');
    record(20, greenAdvanced(commit('a')));
    land(30, 'b');
    land(40, 'c');
    record(50, greenAdvanced(commit('c'), commit('a'), 'green-2'));
    record(60, greenAdvanced(commit('c'), commit('c')));
    land(70, 'd');
    record(80, greenBlocked(commit('d'), 'green has commits main does not'));
    record(90, greenReported(commit('d'), 'task-root'));
    expect(await health()).toMatchObject({ commit: commit('c'), commitsBetweenGreen: [2, 0], blocked: 'green has commits main does not', failures: 1, snapshots: 0, redShare: 0, meanTimeToGreenS: null });
    land(100, 'e');
    record(110, greenAdvanced(commit('e'), commit('c')));
    expect(await health()).toMatchObject({ commit: commit('e'), commitsBetweenGreen: [2, 0, 2], blocked: null });
  });

  it('is active once the run records a green event or settings with a green loop, and names the branch from the settings', async () => {
    const { record, store } = timeline();
    const fold = createGreenHealthFold();
    for (const event of await store.read()) fold.add(event);
    expect(fold.active).toBe(false);
    record(1, { type: 'run.configured', data: { settings: runSettingsFixture() } });
    for (const event of await store.read({ afterSeq: (await store.lastSeq()) - 1 })) fold.add(event);
    expect(fold.active).toBe(false);
    const green = { check: null, everyCommits: 5, everyMs: null, branch: 'colony-green', tag: false, checkTimeoutMs: 600_000 };
    record(2, { type: 'run.configured', data: { settings: runSettingsFixture({ green }) } });
    for (const event of await store.read({ afterSeq: (await store.lastSeq()) - 1 })) fold.add(event);
    expect(fold.active).toBe(true);
    expect(fold.result()).toMatchObject({ branch: 'colony-green', commit: null, snapshots: 0, redShare: 0, redNow: false, lastSnapshot: null });
  });
});
