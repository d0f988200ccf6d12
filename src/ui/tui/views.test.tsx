import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { buildAgentTranscript } from '../../observe/replay/agent-transcript.js';
import { createRunViewFold, type RunView } from '../../observe/view/run-view.js';
import { greenAdvanced, greenBisected, greenBlocked, greenChecked } from '../../observe/testing/green-events.js';
import { openScriptedRun, SCRIPT_T0, SCRIPTED_ROOT, type ScriptedRun } from '../../observe/testing/scripted-run.js';
import type { EventStore } from '../../store/events/event-store.js';
import { AgentDetail } from './agent-detail.js';
import { AgentTree } from './agent-tree.js';
import { detailLines } from './detail-lines.js';
import { EventTail } from './event-tail.js';
import { Header, tasksLine, throughputLine } from './header.js';
import { perMinute, rateFigure, sparkline } from './sparkline.js';
import { treeRows } from './tree-rows.js';

/** A run with a root planner, a sub-planner with two workers, and a worker of the root's. */
function treeRun() {
  const { store, run } = openScriptedRun();
  const root = SCRIPTED_ROOT;
  run.startAgent('planner-sub', 'sub-planner', 'task-sub', 'The printer', root);
  run.startAgent('worker-1', 'worker', 'task-1', 'Print numbers', { agentId: 'planner-sub', taskId: 'task-sub' });
  run.startAgent('worker-2', 'worker', 'task-2', 'Print strings', { agentId: 'planner-sub', taskId: 'task-sub' });
  run.startAgent('worker-3', 'worker', 'task-3', 'Write the lexer', root);
  for (let step = 1; step <= 3; step += 1) run.step('worker-3', step, 'run_command', { command: 'npm test' }, `pass ${step}\nall good`);
  run.land('worker-3', 'd'.repeat(40), ['src/lexer.ts']);
  run.handOff('worker-3', 'task-3', 'task-root', 'done', 'Lexer in', 3);
  run.tick(2_000);
  run.append('worker-1', { type: 'tool.started', data: { step: 1, callId: 'w1', name: 'run_command', input: '{"command":"npm run build"}' } });
  run.tick(7_000);
  return { store, run };
}

async function viewOf(store: EventStore, run: ScriptedRun): Promise<RunView> {
  const fold = createRunViewFold();
  for (const event of await store.read()) fold.add(event);
  const view = fold.snapshot(run.now);
  if (view === null) throw new Error('no view');
  return view;
}

let unmounts: (() => void)[] = [];
afterEach(() => {
  for (const unmount of unmounts) unmount();
  unmounts = [];
});
function show(node: Parameters<typeof render>[0]): string {
  const instance = render(node);
  unmounts.push(instance.unmount);
  return instance.lastFrame() ?? '';
}

describe('the header', () => {
  it('says what the run is, how it stands and how fast it goes', async () => {
    const { store, run } = treeRun();
    const frame = show(<Header view={await viewOf(store, run)} width={100} mode="live" />);
    expect(frame).toContain('run-scripted running');
    expect(frame).toContain('Build the parser · live');
    expect(frame).toContain('agents 5: 4 running 0 waiting 1 ended · workers 2 · ');
    expect(frame).toContain('tasks 1/4 closed 25% · 3 running 1 done · commits 1 · retries 0 conflicts 0 failures 0');
    expect(frame).toMatch(/tools\/min [▁-█]+/);
  });

  it("says what share of the input the provider's prompt cache gave, once it gave any", async () => {
    const { store, run } = treeRun();
    expect(show(<Header view={await viewOf(store, run)} width={100} mode="live" />)).not.toContain('cached');
    run.append('worker-1', {
      type: 'model.responded',
      data: {
        step: 1,
        text: '',
        toolCalls: [],
        finishReason: 'stop',
        usage: { inputTokens: 8000, outputTokens: 100, cachedInputTokens: 7000, cacheWriteTokens: 900 },
        costUsd: 0.01,
        durationMs: 10,
        attempts: 1,
      },
    });
    // 7,000 of the 3 * 900 + 8,000 input tokens.
    expect(show(<Header view={await viewOf(store, run)} width={100} mode="live" />)).toMatch(/ tok \(65\.4% cached\) \$/);
  });

  it('says what the setup runs, and for how long, in place of the agents while it installs', async () => {
    const { store, run } = treeRun();
    run.append('system', { type: 'dependencies.installing', data: { command: 'npm ci --ignore-scripts', registry: 'https://registry.npmjs.org/', packages: 204, elapsedMs: 0 } });
    const frame = show(<Header view={await viewOf(store, run)} width={120} mode="live" />);
    expect(frame).toMatch(/setting up: npm ci --ignore-scripts from https:\/\/registry\.npmjs\.org\/ · \d/);
    expect(frame).not.toContain('agents 5:');
    run.append('system', { type: 'dependencies.prepared', data: { key: 'k'.repeat(64), layerDir: '/l', reused: false, bytes: 1, durationMs: 5 } });
    expect(show(<Header view={await viewOf(store, run)} width={120} mode="live" />)).toContain('agents 5:');
  });

  it('shows the share of tasks closed, and the time left once enough closed', async () => {
    const { store, run } = openScriptedRun();
    const titles = ['Lexer', 'Parser', 'Printer', 'Checker', 'Docs', 'Bench'];
    titles.forEach((title, index) => run.startAgent(`worker-${index}`, 'worker', `task-${index}`, title, SCRIPTED_ROOT));
    const line = async () => tasksLine(await viewOf(store, run), run.now, 100);
    run.tick(60_000);
    run.handOff('worker-0', 'task-0', 'task-root', 'done', 'in', 3);
    run.tick(60_000);
    run.handOff('worker-1', 'task-1', 'task-root', 'done', 'in', 3);
    // Two closed say nothing of a rate yet.
    expect(await line()).toMatch(/^tasks 2\/6 closed 33% · 4 running 2 done · commits 0/);
    run.tick(60_000);
    run.handOff('worker-2', 'task-2', 'task-root', 'failed', 'no', 3);
    // Three closed in three minutes: a task a minute, and three more to go.
    expect(await line()).toMatch(/^tasks 3\/6 closed 50% ~3m left · 3 running 2 done 1 failed/);
    for (const index of [3, 4, 5]) run.handOff(`worker-${index}`, `task-${index}`, 'task-root', 'done', 'in', 3);
    expect(await line()).toMatch(/^tasks 6\/6 closed 100% · 5 done 1 failed/);
  });

  it('keeps each line to 80 columns, leaving out zero counts and the title rather than cutting words', async () => {
    const { store, run } = treeRun();
    run.append('system', greenChecked('d'.repeat(40), true));
    const lines = show(<Header view={await viewOf(store, run)} width={80} mode="replay 1x paused at 09:00:09 (40%)" hideEnded />).split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    // Main's health is worth more than a few letters of the title, which the run's id stands for.
    expect(lines[0]).toBe('colony run-scripted running 9s · replay 1x paused at 09:00:09 (40%) · main ok');
    expect(lines[1]).toContain('1 ended (hidden)');
    // A longer source line leaves out the word colony too, so main's health is still whole.
    const longer = show(<Header view={await viewOf(store, run)} width={80} mode="replay 1024x playing at 09:00:09 (40%)" />).split('\n')[0];
    expect(longer).toBe('run-scripted running 9s · replay 1024x playing at 09:00:09 (40%) · main ok');
    expect(lines[2]).toBe('tasks 1/4 closed 25% · 3 running 1 done · commits 1');
    expect(lines[3]).toMatch(/^commits\/min [▁-█]+ [\d.]+ {2}tools\/min [▁-█]+ [\d.]+ {2}tokens\/min [▁-█]+ [\d.]+k?$/);
  });

  it('writes a figure beside each sparkline: the rate per minute over its last five minutes', async () => {
    const { store, run } = treeRun();
    const line = throughputLine(await viewOf(store, run), run.now, 100);
    // One commit, four tool calls and 3 * 1,200 tokens... in the run's first 9 s: the counts so far.
    expect(line).toMatch(/^commits\/min ▁* ?█ 1 {2}tools\/min █ 4 {2}tokens\/min █ [\d.]+k$/);
    const start = SCRIPT_T0;
    const points = [0, 1, 2, 3, 4, 5].map((minute) => ({ start: start + minute * 60_000, value: minute === 5 ? 6 : 2 }));
    // The last five minutes: 2 + 2 + 2 + 2 in four whole ones and 6 in the half that has passed.
    expect(perMinute(points, start + 5.5 * 60_000, start)).toBeCloseTo(14 / 4.5);
    expect(perMinute([{ start, value: 3 }], start + 10_000, start)).toBe(3);
    expect(perMinute([], start, start)).toBe(0);
    expect([0.44, 3, 12.4, 12_345].map(rateFigure)).toEqual(['0.4', '3', '12', '12k']);
  });

  it('shows the user\'s hold in the first line', async () => {
    const { store, run } = treeRun();
    run.append('system', { type: 'andon.changed', data: { taskId: null, paused: true, reason: 'lunch', by: 'user', andonSeq: 1 } });
    expect(show(<Header view={await viewOf(store, run)} width={100} mode="live" />).split('\n')[0]).toContain('PAUSED (andon): lunch');
  });

  it('shows in red in the first line that someone else took landed work off the trunk', async () => {
    const { store, run } = treeRun();
    const first = async () => show(<Header view={await viewOf(store, run)} width={140} mode="live" />).split('\n')[0];
    expect(await first()).not.toContain('TRUNK REWRITTEN');
    const moved = { kind: 'moved' as const, branch: 'main', commit: 'b'.repeat(40), previous: 'c'.repeat(40), action: 'reset: moving to HEAD~2', dropped: ['c'.repeat(40)], files: [] };
    run.append('system', { type: 'trunk.rewritten', data: moved });
    expect(await first()).toContain('TRUNK REWRITTEN by someone else (1)');
    run.append('system', { type: 'trunk.rewritten', data: moved });
    expect(await first()).toContain('TRUNK REWRITTEN by someone else (2)');
  });

  it('shows main\'s health in the first line: ok or red and for how long, the share of time red, and where green points', async () => {
    const { store, run } = treeRun();
    expect(show(<Header view={await viewOf(store, run)} width={100} mode="live" />)).not.toContain('main ');
    const lexer = 'd'.repeat(40);
    run.append('system', greenChecked(lexer, true));
    run.append('system', greenAdvanced(lexer));
    const green = show(<Header view={await viewOf(store, run)} width={100} mode="live" />).split('\n')[0];
    expect(green).toContain('· live · main ok · 0% red · green dddddddd');
    // e breaks the check 10 s after the run's 9 s, is seen red, and main stays red 11 s to the 30 s now.
    run.tick(10_000);
    run.land('worker-1', 'e'.repeat(40), ['src/print.ts']);
    run.tick(5_000);
    run.append('system', greenChecked('e'.repeat(40), false));
    run.append('system', greenBisected('e'.repeat(40), 'e'.repeat(40), { taskId: 'task-1' }));
    run.append('system', greenBlocked('e'.repeat(40), 'green has commits main does not'));
    run.tick(6_000);
    run.step('worker-2', 1, 'read_file', { path: 'README.md' }, 'hello');
    const red = show(<Header view={await viewOf(store, run)} width={100} mode="live" />).split('\n')[0];
    expect(red).toBe('colony run-scripted running 30s · Build th… · live · main RED 11s · 37% red · green dddddddd blocked');
  });

  it('draws a sparkline relative to its largest value', () => {
    expect(sparkline([0, 1, 2, 4])).toBe('▁▃▅█');
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(sparkline([1, 2, 3], 2)).toBe('▆█');
  });
});

describe('a run with worker hosts', () => {
  it('counts the hosts at work in the header and leads each agent on a host with its name', async () => {
    const { store, run } = openScriptedRun();
    run.append('system', { type: 'workers.changed', data: { workers: 2, previous: 4, by: 'user', requestSeq: 1 } });
    run.append('system', { type: 'host.joined', data: { host: 'build-2', workers: 8, origin: 'https://git.internal/p.git', pid: 7 } });
    run.append('system', { type: 'host.joined', data: { host: 'build-3', workers: 8, origin: 'https://git.internal/p.git', pid: 8 } });
    run.append('system', { type: 'host.left', data: { host: 'build-3', reason: 'the host was stopped', released: 0 } });
    run.append('system', { type: 'task.claimed', data: { taskId: 'task-far', kind: 'worker', attempt: 1, holder: 'build-2/runner-x' } });
    run.append('worker-far', {
      type: 'agent.started',
      data: { role: 'worker', taskId: 'task-far', title: 'Print far away', model: 'sim', systemPrompt: 'You are a colony agent.', task: 'Task', tools: ['run_command'], parentAgentId: SCRIPTED_ROOT.agentId },
    });
    run.tick(1_000);
    const view = await viewOf(store, run);
    const header = show(<Header view={view} width={120} mode="live" />);
    // One worker at work, of the run's own 2 and the 8 of the host still working.
    expect(header).toContain('workers 1/10 · hosts 1/2 · ');
    const frame = show(<AgentTree rows={treeRows(view.agents, new Set(), 'tree')} selectedId="worker-far" sort="tree" width={100} height={10} now={run.now} />);
    expect(frame).toMatch(/worker worker-far Print far away .*running +@build-2/);
  });
});

describe('the agent tree', () => {
  it('nests each agent under the one that published its task, with what it is doing and for how long', async () => {
    const { store, run } = treeRun();
    const view = await viewOf(store, run);
    const frame = show(<AgentTree rows={treeRows(view.agents, new Set(), 'tree')} selectedId="worker-1" sort="tree" width={100} height={10} now={run.now} />);
    const lines = frame.split('\n');
    expect(lines[0]).toContain('agents (sorted by tree)');
    expect(lines[1]).toMatch(/^▾ root planner-root Build the parser/);
    expect(lines[2]).toMatch(/^ {2}▾ planner planner-sub The printer/);
    expect(lines[3]).toMatch(/^ {4} {2}worker worker-1 Print numbers .*running +7s run_command npm run/);
    expect(lines[5]).toMatch(/^ {2} {2}worker worker-3 Write the lexer .*done/);
  });

  it('folds an agent\'s subtree away and sorts siblings by cost', async () => {
    const { store, run } = treeRun();
    const view = await viewOf(store, run);
    const folded = treeRows(view.agents, new Set(['planner-sub']), 'tree');
    expect(folded.map((row) => row.agent.id)).toEqual(['planner-root', 'planner-sub', 'worker-3']);
    const frame = show(<AgentTree rows={folded} selectedId={null} sort="tree" width={100} height={10} now={run.now} />);
    expect(frame).toContain('▸ planner planner-sub (+2) The print');
    expect(treeRows(view.agents, new Set(), 'cost').map((row) => row.agent.id)).toEqual(['planner-root', 'worker-3', 'planner-sub', 'worker-1', 'worker-2']);
  });

  it('lines its column heading up with the rows, and keeps ids and states whole at 80 columns', async () => {
    const { store, run } = treeRun();
    run.startAgent('planner-deep', 'sub-planner', 'task-deep', 'Plan the standard library modules one by one', { agentId: 'planner-sub', taskId: 'task-sub' });
    run.startAgent('worker-a1b2c3d4', 'worker', 'task-long', 'Build src/strings/template.js with fillTemplate and its tests', { agentId: 'planner-deep', taskId: 'task-deep' });
    const view = await viewOf(store, run);
    const lines = show(<AgentTree rows={treeRows(view.agents, new Set(), 'tree')} selectedId={null} sort="tree" width={80} height={10} now={run.now} />).split('\n');
    const [heading, ...rows] = lines.filter((line) => line.trim() !== '');
    if (heading === undefined) throw new Error('no heading');
    const stateAt = heading.indexOf('state');
    const doingAt = heading.indexOf('doing');
    for (const row of rows) {
      expect(row.length, row).toBeLessThanOrEqual(80);
      // Each state starts under "state", what it does under "doing", and the cost ends under "cost".
      expect(row.slice(stateAt, doingAt).trim(), row).toMatch(/^(running|waiting|done)$/);
      expect(row[stateAt - 1], row).toBe(' ');
      expect(row.length, row).toBe(heading.length);
      expect(row.endsWith('$0.00') || row.endsWith('$0.01'), row).toBe(true);
    }
    expect(heading.endsWith(' cost')).toBe(true);
    for (const id of ['planner-root', 'planner-sub', 'planner-deep', 'worker-1', 'worker-a1b2c3d4']) expect(lines.some((line) => line.includes(` ${id} `)), id).toBe(true);
    // Only the title gives way: the deepest worker's is shortened, its id and state are whole.
    expect(rows.find((row) => row.includes('worker-a1b2c3d4'))).toMatch(/worker worker-a1b2c3d4 Build\S*… +running /);
  });

  it('puts agents at work before ended ones, and leaves ended ones out on request', async () => {
    const { store, run } = openScriptedRun();
    run.startAgent('worker-early', 'worker', 'task-early', 'Write the lexer', SCRIPTED_ROOT);
    run.handOff('worker-early', 'task-early', 'task-root', 'done', 'Lexer in', 3);
    run.tick(1_000);
    run.startAgent('worker-late', 'worker', 'task-late', 'Write the printer', SCRIPTED_ROOT);
    const view = await viewOf(store, run);
    expect(treeRows(view.agents, new Set(), 'tree').map((row) => row.agent.id)).toEqual(['planner-root', 'worker-late', 'worker-early']);
    const shown = treeRows(view.agents, new Set(), 'tree', true);
    expect(shown.map((row) => row.agent.id)).toEqual(['planner-root', 'worker-late']);
    expect(show(<AgentTree rows={shown} selectedId={null} sort="tree" hiddenEnded={1} width={100} height={10} now={run.now} />).split('\n')[0]).toMatch(/^agents \(sorted by tree, 1 ended hidden\) +state/);
    run.handOff('worker-late', 'task-late', 'task-root', 'done', 'Printer in', 3);
    run.handOff('planner-root', 'task-root', null, 'done', 'All in', 9);
    const ended = await viewOf(store, run);
    expect(treeRows(ended.agents, new Set(), 'tree', true)).toEqual([]);
    expect(show(<AgentTree rows={[]} selectedId={null} sort="tree" hiddenEnded={3} width={100} height={10} now={run.now} />)).toContain('Every agent has ended: 3 hidden, f shows them.');
  });

  it('draws only the rows that fit, around the selection', async () => {
    const { store, run } = openScriptedRun('Many');
    for (let index = 0; index < 500; index += 1) run.startAgent(`worker-${index}`, 'worker', `task-${index}`, `Module ${index}`, { agentId: 'planner-root', taskId: 'task-root' });
    const view = await viewOf(store, run);
    const frame = show(<AgentTree rows={treeRows(view.agents, new Set(), 'tree')} selectedId="worker-250" sort="tree" width={100} height={11} now={run.now} />);
    const lines = frame.split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toContain('of 501');
    expect(frame).toContain('worker-250 Module 250');
    expect(frame).not.toContain('worker-100 ');
  });
});

describe('the event tail', () => {
  it('shows the latest events that fit, newest last', async () => {
    const { store, run } = treeRun();
    const view = await viewOf(store, run);
    const lines = show(<EventTail tail={view.tail} width={100} height={4} />).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^events ─/);
    expect(lines[3]).toMatch(/^09:00:02 worker-1 +run_command npm run build/);
  });
});

describe('an agent\'s page', () => {
  it('shows the transcript with each tool call\'s output, and the scratchpad and handoff tabs', async () => {
    const { store, run } = treeRun();
    run.append('worker-3', { type: 'scratchpad.written', data: { content: 'Plan: lexer first\nThen tests' } });
    const view = await viewOf(store, run);
    const transcript = buildAgentTranscript('worker-3', await store.read());
    const agent = view.agents.find((candidate) => candidate.id === 'worker-3') ?? null;
    const page = show(<AgentDetail agent={agent} agentId="worker-3" tab="transcript" lines={detailLines('transcript', transcript, null, 120)} offset={0} width={120} height={30} />);
    expect(page).toContain('worker-3 worker done');
    expect(page).toContain('▶ run_command ok in 0.0s: {"command":"npm test"}');
    expect(page).toContain('  │ pass 1');
    expect(page).toContain('  │ all good');
    expect(detailLines('scratchpad', transcript, null, 120)).toEqual(['Plan: lexer first', 'Then tests']);
    expect(detailLines('handoffs', transcript, null, 120)).toEqual(['done: Lexer in', 'notes:', '  - notes of task-3', '']);
    expect(detailLines('diff', transcript, null, 120)).toEqual(['(reading the diff…)']);
  });

  it('scrolls, and says which lines it shows', () => {
    const lines = Array.from({ length: 100 }, (_, index) => `line ${index + 1}`);
    const page = show(<AgentDetail agent={null} agentId="worker-9" tab="diff" lines={lines} offset={40} width={80} height={12} />);
    expect(page).toContain('lines 41-50 of 100');
    expect(page).toContain('line 41');
    expect(page).toContain('line 50');
    expect(page).not.toContain('line 51');
  });
});
