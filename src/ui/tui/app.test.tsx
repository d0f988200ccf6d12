import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openReplay } from '../../observe/replay/replay-run.js';
import { followRun } from '../../observe/replay/run-reader.js';
import { SCRIPT_T0, openScriptedRun, SCRIPTED_ROOT } from '../../observe/testing/scripted-run.js';
import { keyHelp, TuiApp } from './app.js';
import { liveSource, replaySource } from './sources.js';
import type { SteeringOutcome, TuiActions } from './tui-source.js';

const SIZE = { columns: 100, rows: 30 };

function liveRun() {
  const { store, run, clock } = openScriptedRun();
  const root = SCRIPTED_ROOT;
  run.startAgent('worker-1', 'worker', 'task-1', 'Write the lexer', root);
  run.step('worker-1', 1, 'run_command', { command: 'npm test' }, 'Tests: 12 passed');
  return { store, run, clock };
}

/** Steering that records what it was asked, and answers as the real one does when it worked. */
function recordingActions() {
  const calls: unknown[][] = [];
  const answer = (...call: unknown[]): Promise<SteeringOutcome> => {
    calls.push(call);
    return Promise.resolve({ ok: true, message: `done: ${call.join(' ')}` });
  };
  const actions: TuiActions = {
    toggleAndon: (reason) => answer('andon', reason),
    say: (target, text) => answer('say', target, text),
    stop: (target, reason) => answer('stop', target, reason),
    setWorkers: (workers) => answer('workers', workers),
    changeWorkers: (delta) => answer('change workers', delta),
  };
  return { actions, calls };
}

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
});

function mount(node: Parameters<typeof render>[0]) {
  const instance = render(node);
  cleanups.push(instance.unmount);
  const frame = () => instance.lastFrame() ?? '';
  const press = async (...keys: string[]) => {
    for (const key of keys) {
      instance.stdin.write(key);
      // Ink reads each write as one key press only after the one before was handled.
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  };
  const until = (text: string | RegExp) => vi.waitFor(() => expect(frame()).toMatch(text), { timeout: 3_000, interval: 20 });
  return { frame, press, until };
}

describe('the terminal UI on a live run', () => {
  it('shows agents as they appear in the log, and one agent\'s transcript with its tool output', async () => {
    const { store, run, clock } = liveRun();
    const source = liveSource(followRun(store), () => Promise.resolve('diff --git a/src/lexer.ts b/src/lexer.ts'), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={recordingActions().actions} size={SIZE} frameMs={20} />);
    await ui.until('worker-1 Write the lexer');
    expect(ui.frame()).not.toContain('worker-2');
    run.startAgent('worker-2', 'worker', 'task-2', 'Write the printer', { agentId: 'planner-root', taskId: 'task-root' });
    await ui.until('worker-2 Write the printer');
    await ui.press('j', '\r');
    await ui.until('worker-1 worker running');
    await ui.until('▶ run_command ok in 0.0s: {"command":"npm test"}');
    expect(ui.frame()).toContain('│ Tests: 12 passed');
    await ui.press('4');
    await ui.until('diff --git a/src/lexer.ts');
    await ui.press('q');
    await ui.until('agents (sorted by tree)');
  });

  it('steers from the keys: andon, a message to the worker\'s planner, workers, stopping an agent', async () => {
    const { store, clock } = liveRun();
    const { actions, calls } = recordingActions();
    const source = liveSource(followRun(store), () => Promise.resolve(''), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={actions} size={SIZE} frameMs={20} />);
    await ui.until('worker-1');
    await ui.press('a');
    await ui.until('done: andon paused from the terminal UI');
    await ui.press('j', 'm');
    await ui.until('Message to planner-root:');
    await ui.press('B', 'u', 'i', 'l', 'd', ' ', 'i', 't', '\r');
    // Keys that arrive in one read, as a paste or a script sends them, each count.
    await ui.press('w3\r');
    await ui.press('+', '-');
    await ui.press('x');
    await ui.until('Stop worker worker-1 "Write the lexer"?');
    await ui.press('y');
    await ui.until('done: stop worker-1');
    expect(calls).toEqual([
      ['andon', 'paused from the terminal UI'],
      ['say', 'planner-root', 'Build it'],
      ['workers', 3],
      ['change workers', 1],
      ['change workers', -1],
      ['stop', 'worker-1', 'stopped from the terminal UI'],
    ]);
  });

  it('hides ended agents on f and shows them again, saying so in the header, the list heading and the keys', async () => {
    const { store, run, clock } = liveRun();
    run.handOff('worker-1', 'task-1', 'task-root', 'done', 'Lexer in', 1);
    run.startAgent('worker-2', 'worker', 'task-2', 'Write the printer', SCRIPTED_ROOT);
    const source = liveSource(followRun(store), () => Promise.resolve(''), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={recordingActions().actions} size={{ columns: 80, rows: 30 }} frameMs={20} />);
    await ui.until('worker-1 Write');
    expect(ui.frame()).toContain('f hide ended');
    await ui.press('f');
    await ui.until('1 ended (hidden)');
    expect(ui.frame()).toMatch(/agents by tree, 1 ended hidden +state/);
    expect(ui.frame()).toContain('f show ended');
    expect(ui.frame()).not.toContain('worker-1 Write');
    expect(ui.frame()).toContain('worker-2 Write');
    await ui.press('f');
    await ui.until('worker-1 Write');
    expect(ui.frame()).not.toContain('(hidden)');
  });

  it('asks before q stops a run it is attached to, and quits only on yes', async () => {
    const { store, clock } = liveRun();
    const quit = vi.fn();
    const source = liveSource(followRun(store), () => Promise.resolve(''), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={null} size={SIZE} frameMs={20} quitQuestion="Stop the run?" onQuit={quit} />);
    await ui.until('worker-1');
    await ui.press('q');
    await ui.until('Stop the run? (y/n)');
    await ui.press('n');
    expect(quit).not.toHaveBeenCalled();
    await ui.press('q', 'y');
    await vi.waitFor(() => expect(quit).toHaveBeenCalledTimes(1));
  });

  it('refuses to steer a replay, saying why', async () => {
    const { store, run } = liveRun();
    run.tick(30_000);
    run.endRun('done');
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    const source = replaySource(opened.replay, () => Promise.resolve(''), { speed: 1, paused: true });
    const ui = mount(<TuiApp source={source} actions={null} size={SIZE} frameMs={20} />);
    await ui.until('replay 1x paused');
    await ui.press('a');
    await ui.until('A replay only shows the run; steer a live run with colony tui.');
  });
});

describe('the terminal UI in hard conditions', () => {
  it('fits a short terminal by giving up the event tail', async () => {
    const { store, clock } = liveRun();
    const source = liveSource(followRun(store), () => Promise.resolve(''), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={null} size={{ columns: 80, rows: 12 }} frameMs={20} />);
    await ui.until('worker-1');
    expect(ui.frame().split('\n').length).toBeLessThanOrEqual(12);
    expect(ui.frame()).not.toContain('events ─');
  });

  it('says when the log cannot be read, and goes on drawing once it can', async () => {
    const { store, run, clock } = liveRun();
    let failing = false;
    const reader = { read: (query: Parameters<typeof store.read>[0]) => (failing ? failWith('database is locked') : store.read(query)) };
    const source = liveSource(followRun(reader), () => Promise.resolve(''), () => clock.now);
    const ui = mount(<TuiApp source={source} actions={null} size={SIZE} frameMs={20} />);
    await ui.until('worker-1');
    failing = true;
    run.startAgent('worker-2', 'worker', 'task-2', 'Write the printer', { agentId: 'planner-root', taskId: 'task-root' });
    await ui.until("colony could not read the run's log this time (it tries again): database is locked");
    failing = false;
    await ui.until('worker-2 Write the printer');
  });
});

function failWith(message: string): never {
  throw new Error(message);
}

describe('the terminal UI on a replay', () => {
  it('steps one event at a time while paused, and plays faster on >', async () => {
    const { store, run } = liveRun();
    run.tick(60_000);
    run.startAgent('worker-2', 'worker', 'task-2', 'Write the printer', { agentId: 'planner-root', taskId: 'task-root' });
    run.endRun('done');
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    await opened.replay.advanceTo(SCRIPT_T0 + 1_000);
    const source = replaySource(opened.replay, () => Promise.resolve(''), { speed: 1, paused: true });
    const ui = mount(<TuiApp source={source} actions={null} size={SIZE} frameMs={20} />);
    await ui.until('worker-1 Write the lexer');
    expect(ui.frame()).not.toContain('worker-2');
    const before = opened.replay.view()?.lastSeq ?? 0;
    await ui.press('.');
    expect(opened.replay.view()?.lastSeq).toBe(before + 1);
    await ui.press('>', '>');
    await ui.until('replay 4x paused');
    // Stepping through the rest shows the second worker when its start is reached.
    for (let index = 0; index < 12 && !ui.frame().includes('worker-2'); index += 1) await ui.press('.');
    await ui.until('worker-2 Write the printer');
  });
});

describe('the key help', () => {
  it('fits 80 columns in fewer words, and names every key it has room for on a wide terminal', () => {
    for (const screen of ['tree', 'detail'] as const) {
      for (const steerable of [true, false]) {
        for (const replay of [true, false]) {
          // A replay is never steered.
          if (steerable && replay) continue;
          const facts = { screen, steerable, replay, hideEnded: false };
          const narrow = keyHelp(facts, 80);
          expect(narrow.length, narrow).toBeLessThanOrEqual(80);
          expect(narrow).toMatch(/ · q quit$/);
          if (screen === 'tree') expect(narrow).toContain('f hide ended');
          if (steerable) expect(narrow).toContain('x stop');
          if (replay) expect(narrow).toContain('. step');
        }
      }
    }
    expect(keyHelp({ screen: 'tree', steerable: true, replay: false, hideEnded: true }, 160)).toBe(
      '↑↓ select  enter open  space fold  s sort  f show ended · a andon  x stop  w/+/- workers  m message · q quit',
    );
  });
});
