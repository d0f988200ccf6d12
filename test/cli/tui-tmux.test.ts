import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { readLoggedEvents, waitForLoggedEvent } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { openColonyInTmux, type TmuxTerminal } from '../testing/tmux-terminal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** An escape that sets a foreground colour, as tmux writes what its pane shows. */
// eslint-disable-next-line no-control-regex
const COLOUR = /\x1b\[(?:\d+;)*(?:3[0-7]|9[0-7]|38;)[\d;]*m/;

/** The run is slowed down so there is time to steer it; a loaded machine takes longer. */
const TEST_TIMEOUT_MS = 240_000;

let repo: ExampleRepository;
let stateDir: string;
let goalPath: string;
let terminal: TmuxTerminal | null = null;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  stateDir = defaultStateDir(repo.dir);
  goalPath = join(repo.dir, '..', 'GOAL.md');
  writeFileSync(goalPath, readFileSync(join(repo.dir, 'GOAL.md'), 'utf8'));
});

afterEach(() => {
  terminal?.close();
  terminal = null;
  repo.cleanup();
});

/** The pids of processes whose command line holds `text`. */
function processesRunning(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', '--', text], { encoding: 'utf8' }).trim().split('\n').filter((pid) => pid !== '');
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}

function ofType<Type extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: Type): Extract<ColonyEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: Type }> => event.type === type);
}

/** The most workers that ran at once in the events after `afterSeq`, counting those already running then. */
function mostWorkersAtOnce(events: readonly ColonyEvent[], afterSeq: number): number {
  const running = new Set<string>();
  let most = 0;
  for (const event of events) {
    if (event.type === 'agent.started' && event.data.role === 'worker') running.add(event.agentId);
    if (event.type === 'agent.ended' || event.type === 'agent.failed') running.delete(event.agentId);
    if (event.seq > afterSeq) most = Math.max(most, running.size);
  }
  return most;
}

describeRuns('colony tui, in a real terminal, on a live run', () => {
  it(
    'shows agents appear and end, a tool call\'s output, and steers: andon, workers, a message to the root planner',
    async () => {
      const running = runCli(['run', goalPath, '--repo', repo.dir, '--model', 'sim?seed=5&latency=400..700', '--workers', '3', '--quiet', '--json']);
      await waitForLoggedEvent(stateDir, (event) => event.type === 'run.started');
      terminal = openColonyInTmux(['tui', '--state', stateDir], repo.dir);
      const tui = terminal;

      // The tree: the root planner first, then its workers as they start, and end.
      await tui.waitFor(/▾ root planner-\w+ toolbox/);
      await tui.waitFor(/worker worker-\w+ Build src\/\S+ +running/);
      await tui.waitFor(/worker worker-\w+ Build src\/\S+ +done +handoff submitted/, 90_000);

      // The andon key: nothing is claimed while it holds. The rest is done while it holds, so the
      // run cannot end before the steering is seen through, however fast the machine.
      tui.keys(['a']);
      await tui.waitFor('Spawning paused across the run (andon)');
      await tui.waitFor('PAUSED (andon)');
      const held = await waitForLoggedEvent(stateDir, (event) => event.type === 'andon.changed' && event.data.paused && event.data.by === 'user');

      // The root planner's page: its transcript, with a tool call and what the tool answered.
      tui.keys(['g']);
      tui.keys(['Enter']);
      await tui.waitFor(/1 transcript +2 scratchpad +3 handoffs +4 diff/);
      // Its task (the goal) comes first; a page or two down are its first tool calls.
      for (let page = 0; page < 10 && !/▶ create_task ok in/.test(tui.screen()); page += 1) {
        tui.keys(['PageDown']);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      await tui.waitFor(/▶ create_task ok in [\d.]+s: \{/);
      await tui.waitFor(/│ Created task task-\w+: Build src\//);
      tui.keys(['Escape']);
      await tui.waitFor('agents (sorted by tree)');

      // The workers key: one worker at a time from the change on.
      tui.keys(['w']);
      await tui.waitFor('Workers at once (now 3):');
      tui.keys(['1'], true);
      tui.keys(['Enter']);
      await tui.waitFor('Up to 1 worker(s) at once from now on.');
      const narrowed = await waitForLoggedEvent(stateDir, (event) => event.type === 'workers.changed');
      await tui.waitFor(/workers \d\/1 /);

      // A message to the root planner, typed in the terminal.
      tui.keys(['g']);
      tui.keys(['m']);
      await tui.waitFor(/Message to planner-\w+:/);
      tui.keys(['Check the README mentions every module.'], true);
      tui.keys(['Enter']);
      await tui.waitFor(/Sent to root-planner planner-\w+/);
      const delivered = await waitForLoggedEvent(stateDir, (event) => event.type === 'message.received' && event.data.content.includes('Check the README mentions every module.'), 90_000);

      tui.keys(['a']);
      await tui.waitFor('Spawning released');
      const released = await waitForLoggedEvent(stateDir, (event) => event.type === 'andon.changed' && !event.data.paused && event.data.by === 'user');

      const result = await running;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done' });
      const events = readLoggedEvents(stateDir);
      const claimedWhileHeld = ofType(events, 'task.claimed').filter((event) => event.seq > held.seq && event.seq < released.seq);
      expect(claimedWhileHeld).toEqual([]);
      expect(narrowed).toMatchObject({ data: { workers: 1, previous: 3 } });
      // Workers already running when the limit fell finish; none starts until fewer than one run.
      const startedAfter = ofType(events, 'agent.started').filter((event) => event.seq > narrowed.seq && event.data.role === 'worker');
      expect(startedAfter.length).toBeGreaterThan(0);
      const firstStart = startedAfter[0]?.seq ?? 0;
      expect(mostWorkersAtOnce(events, firstStart)).toBe(1);
      const rootAgent = ofType(events, 'agent.started').find((event) => event.data.role === 'root-planner');
      expect(delivered.agentId).toBe(rootAgent?.agentId);

      // The tree ends with every agent ended, as the log does.
      await tui.waitFor(/ended done/);
      tui.keys(['q']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'colony run draws the terminal UI in a terminal, and prints its summary when the run ends',
    async () => {
      terminal = openColonyInTmux(['run', goalPath, '--repo', repo.dir, '--model', 'sim?seed=6&latency=50..100', '--workers', '3'], repo.dir);
      const tui = terminal;
      await tui.waitFor(/colony run-\w+ running .* toolbox · live/);
      await tui.waitFor('agents (sorted by tree)');
      const summary = await tui.waitFor(/run run-\w+: done in /, 120_000);
      // The check ran on the branch the run landed on, its own.
      const status = JSON.parse((await runCli(['status', '--state', stateDir, '--json'])).stdout) as { run: { trunk: string | null } };
      expect(status.run.trunk).toMatch(/^colony\//);
      expect(summary).toContain(`check on ${status.run.trunk ?? ''}: \`node scripts/test.js\` passed`);
    },
    TEST_TIMEOUT_MS,
  );
});

describeRuns('colony replay', () => {
  it(
    'of a finished run ends on the state colony status reports',
    async () => {
      const result = await runCli(['run', goalPath, '--repo', repo.dir, '--model', 'sim?seed=7&latency=5..20', '--workers', '3', '--quiet', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const status = JSON.parse((await runCli(['status', '--state', stateDir, '--json'])).stdout) as Record<string, unknown>;
      const replayed = JSON.parse((await runCli(['replay', '--state', stateDir, '--json'])).stdout) as { status: Record<string, unknown> };
      for (const part of ['run', 'tasks', 'handoffs', 'commits', 'acceptance', 'tokens', 'costUsd', 'modelCalls', 'toolCalls', 'agents', 'budget', 'sandbox', 'workers', 'green']) {
        expect(replayed.status[part], part).toEqual(status[part]);
      }

      // At 80 columns, paused after four tasks closed: the header's lines, the list's heading
      // over its columns, and every agent's id whole.
      const events = readLoggedEvents(stateDir);
      const closed = ofType(events, 'handoff.delivered').filter((event) => event.data.parentTaskId !== null);
      const fourth = closed[3];
      if (fourth === undefined) throw new Error(`the run closed ${closed.length} tasks; the test needs four`);
      const ids = new Set(ofType(events, 'agent.started').map((event) => event.agentId));
      terminal = openColonyInTmux(['replay', '--state', stateDir, '--at', new Date(fourth.ts).toISOString(), '--paused'], repo.dir, { columns: 80, rows: 30 });
      const narrow = (await terminal.waitFor(/agents \(sorted by tree\)/)).split('\n');
      expect(narrow[0]).toMatch(/^(colony )?run-\w+ running \d+s · .*replay 1x paused at /);
      expect(narrow[1]).toMatch(/^agents \d+: \d+ running \d+ waiting \d+ ended · workers \d+\/3 · \S+ tok \$\d/);
      expect(narrow[2]).toMatch(new RegExp(`^tasks 4/${closed.length} closed \\d+% (<1m|~\\d+m) left · .*commits \\d+`));
      expect(narrow[3]).toMatch(/^commits\/min [▁-█]+ [\d.]+ {2}tools\/min [▁-█]+ [\d.]+ {2}tokens\/min [▁-█]+ [\d.]+k?$/);
      const headingAt = narrow.findIndex((line) => line.startsWith('agents (sorted by tree)'));
      const heading = narrow[headingAt] ?? '';
      const rows = narrow.slice(headingAt + 1).filter((line) => /^ *[▾▸ ] (root|planner|worker) /.test(line));
      expect(rows.length).toBeGreaterThan(2);
      for (const row of rows) {
        expect(row.slice(heading.indexOf('state'), heading.indexOf('doing')).trim(), row).toMatch(/^(running|waiting|done|partial|blocked|failed)$/);
        expect(row.trimEnd().length, row).toBe(heading.trimEnd().length);
        const id = /(?:root|planner|worker) ((?:planner|worker)-\w+)/.exec(row)?.[1] ?? '';
        expect(ids.has(id), `${id} in ${row}`).toBe(true);
      }
      for (const line of narrow) expect(line.length, line).toBeLessThanOrEqual(80);
      terminal.close();

      // In the terminal: played back fast, it reaches the end and says so.
      terminal = openColonyInTmux(['replay', '--state', stateDir, '--speed', '1024'], repo.dir);
      await terminal.waitFor(/replay 1024x at the end/, 60_000);
      await terminal.waitFor(/colony run-\w+ done/);
      // Drawn in colour, unless NO_COLOR or --no-color says not to: then in bold, dim and inverse alone.
      expect(terminal.screen(true)).toMatch(COLOUR);

      // The terminal going away (a closed SSH session) ends it: nothing is left running.
      const replaying = `replay --state ${stateDir}`;
      expect(processesRunning(replaying)).toHaveLength(1);
      terminal.close();
      terminal = null;
      const deadline = Date.now() + 20_000;
      while (processesRunning(replaying).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(processesRunning(replaying)).toEqual([]);
      for (const [flags, env] of [[['--no-color'], {}], [[], { NO_COLOR: '1' }]] as const) {
        terminal = openColonyInTmux(['replay', '--state', stateDir, '--speed', '1024', ...flags], repo.dir, undefined, env);
        await terminal.waitFor(/replay 1024x at the end/, 60_000);
        await terminal.waitFor(/colony run-\w+ done/);
        expect(terminal.screen(true), JSON.stringify({ flags, env })).not.toMatch(COLOUR);
        terminal.close();
        terminal = null;
      }
    },
    TEST_TIMEOUT_MS,
  );
});
