import { loadavg } from 'node:os';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { render } from 'ink';
import { createElement } from 'react';
import { followRun } from '../src/observe/replay/run-reader.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { TuiApp } from '../src/ui/tui/app.js';
import { liveSource } from '../src/ui/tui/sources.js';
import { treeRows } from '../src/ui/tui/tree-rows.js';
import type { TuiSource } from '../src/ui/tui/tui-source.js';
import { fakeTerminal } from './fake-terminal.js';

/**
 * The terminal UI attached to a large log, measured in a process of its own:
 * `tsx benchmarks/tui-child.ts '<json>'` follows the log as `colony tui` does (followRun over the
 * SQLite store, the live source, the Ink app with its frame rate and its cap on frames a
 * second) on a fake terminal, and prints JSON lines: `caught-up` once the whole log is read
 * (the parent then starts appending), and the figures at the end.
 */
export interface TuiChildSettings {
  readonly path: string;
  readonly pageAgentId: string;
  readonly columns: number;
  readonly rows: number;
  /** Frames measured on the tree, on the tree sorted by cost, and on the agent's page. */
  readonly frames: { readonly tree: number; readonly cost: number; readonly page: number };
  /** Events the parent's appends must have added before frames are measured. */
  readonly appendedBefore: number;
}

type Phase = 'opening' | 'catch-up' | 'settling' | 'tree' | 'cost' | 'page';

export interface FrameFigures {
  /** From the frame's tick to the end of its drawing (reading, folding, React, layout, Ink), less the reads between frames that ran meanwhile. */
  readonly frameMs: number[];
  /** The CPU time the process spent in those frames (other processes on the machine add to the wall time, not to this). */
  readonly frameCpuMs: number[];
  /** The tick alone: reading and folding what the log gained, and the view's snapshot. */
  readonly tickMs: number[];
  /** Ink's own measure: turning the laid-out tree into the screen's text. */
  readonly inkRenderMs: number[];
  /** The longest the event loop was busy at a stretch (a key pressed then waits that long): frames, reads between them, garbage collection. */
  longestBlockMs: number;
  /** The longest garbage collection pause. */
  longestGcMs: number;
}

export interface MemoryFigures {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /** The heap still in use after a full collection, taken after the two figures above. */
  readonly retainedMb: number;
}

export interface TuiChildFigures {
  readonly kind: 'figures';
  /** From starting to the first screen drawn. */
  readonly firstScreenMs: number;
  readonly catchUpMs: number;
  readonly catchUpCpuMs: number;
  readonly catchUpFrames: number;
  readonly catchUpEvents: number;
  /** Each read between frames (while the log was behind). */
  readonly readsMs: number[];
  readonly phases: Readonly<Record<Phase, FrameFigures>>;
  /** Reading an agent's page (on opening it, then every second while it is open), and drawing it. */
  readonly transcriptMs: number[];
  readonly transcriptFrameMs: number[];
  /** Entries of the agent's transcript, and lines of its page. */
  readonly pageEntries: number;
  readonly pageLines: number;
  /** Events the log gained while frames were measured, a second. */
  readonly appendRate: number;
  readonly atFirstScreen: Omit<MemoryFigures, 'retainedMb'>;
  readonly afterCatchUp: MemoryFigures;
  readonly atEnd: MemoryFigures;
  readonly peakRssMb: number;
  /** Milliseconds from the memory taken after catch-up to the memory taken at the end. */
  readonly framesMs: number;
  /** The machine's 1-minute load average when catch-up ended and at the end: other processes' work shares its cores. */
  readonly loadAverages: readonly [number, number];
}

const settings = JSON.parse(process.argv[2] ?? '{}') as TuiChildSettings;
const terminal = fakeTerminal(settings.columns, settings.rows);
const store = openSqliteEventStore(settings.path);
const followed = followRun(store);
const source = liveSource(followed, () => Promise.resolve(''));

let phase: Phase = 'opening';
const phases: Record<Phase, FrameFigures> = {
  opening: { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
  'catch-up': { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
  settling: { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
  tree: { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
  cost: { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
  page: { frameMs: [], frameCpuMs: [], tickMs: [], inkRenderMs: [], longestBlockMs: 0, longestGcMs: 0 },
};
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
new PerformanceObserver((list) => {
  const figures = phases[phase];
  for (const entry of list.getEntries()) figures.longestGcMs = Math.max(figures.longestGcMs, entry.duration);
}).observe({ entryTypes: ['gc'] });
/** Ends the phase measured, keeping the longest stretch the event loop was busy in it, and starts `next`. */
function enterPhase(next: Phase): void {
  const figures = phases[phase];
  figures.longestBlockMs = Math.max(figures.longestBlockMs, loopDelay.max / 1e6);
  loopDelay.reset();
  phase = next;
}
const transcriptMs: number[] = [];
const transcriptFrameMs: number[] = [];
let pageEntries = 0;
const started = performance.now();
const startedCpu = process.cpuUsage();
let caughtUpAt: number | null = null;
let catchUpCpuMs = 0;
let frameWaiter: { phase: Phase; count: number; resolve: () => void } | null = null;
let showedFirstScreen: () => void = () => undefined;
const firstScreen = new Promise<void>((resolve) => {
  showedFirstScreen = resolve;
});

/** When the reads between frames ran: a frame's figure leaves out those that ran between its tick and its drawing. */
const reads: { start: number; ms: number; cpuMs: number }[] = [];
const readsMs: number[] = [];
/** The wall and CPU time of the reads that ran since `start` (each read runs whole in one turn). */
function readingSince(start: number): { ms: number; cpuMs: number } {
  const since = { ms: 0, cpuMs: 0 };
  for (let index = reads.length - 1; index >= 0; index -= 1) {
    const read = reads[index];
    if (read === undefined || read.start < start) break;
    since.ms += read.ms;
    since.cpuMs += read.cpuMs;
  }
  return since;
}
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1_000;
};

/**
 * Calls `done` with the time since `start` once the work this turn queued is done: React renders
 * a state set now in a scheduler task (an immediate queued after this one's first), and Ink lays
 * out and draws in React's commit, so an immediate queued from an immediate queued now runs after.
 */
function afterRender(start: number, cpu: NodeJS.CpuUsage, done: (ms: number, cpuMs: number) => void): void {
  setImmediate(() =>
    setImmediate(() => {
      const reading = readingSince(start);
      done(performance.now() - start - reading.ms, cpuMs(cpu) - reading.cpuMs);
    }),
  );
}

const measured: TuiSource = {
  ...source,
  async readMore() {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const more = await source.readMore();
    const read = { start, ms: performance.now() - start, cpuMs: cpuMs(cpu) };
    reads.push(read);
    if (reads.length > 1_000) reads.splice(0, 500);
    readsMs.push(read.ms);
    return more;
  },
  async tick() {
    const start = performance.now();
    const cpu = process.cpuUsage();
    await source.tick();
    const tickPhase = phase;
    const figures = phases[tickPhase];
    figures.tickMs.push(performance.now() - start);
    // The first frame (read, then the whole screen made for the first time) is the opening; the frames after it read the rest.
    if (phase === 'opening') enterPhase('catch-up');
    if (phase === 'catch-up' && followed.caughtUp) {
      caughtUpAt = performance.now();
      catchUpCpuMs = cpuMs(startedCpu);
      enterPhase('settling');
    }
    afterRender(start, cpu, (ms, cpuUsed) => {
      figures.frameMs.push(ms);
      figures.frameCpuMs.push(cpuUsed);
      if (tickPhase === 'opening') showedFirstScreen();
      if (frameWaiter !== null && frameWaiter.phase === tickPhase && figures.frameMs.length >= frameWaiter.count) frameWaiter.resolve();
    });
  },
  async transcript(agentId) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const transcript = await source.transcript(agentId);
    transcriptMs.push(performance.now() - start);
    if (agentId === settings.pageAgentId) pageEntries = transcript.entries.length;
    afterRender(start, cpu, (ms) => transcriptFrameMs.push(ms));
    return transcript;
  },
};

// The parent starts this process with --expose-gc, so what the heap retains can be told from what it has not collected yet.
const collect = (globalThis as { gc?: () => void }).gc;
const memory = (): MemoryFigures => {
  const usage = process.memoryUsage();
  collect?.();
  return { rssMb: usage.rss / 2 ** 20, heapUsedMb: usage.heapUsed / 2 ** 20, retainedMb: process.memoryUsage().heapUsed / 2 ** 20 };
};
const memoryNow = () => ({ rssMb: process.memoryUsage().rss / 2 ** 20, heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const frames = (next: Phase, count: number) =>
  new Promise<void>((resolve) => {
    enterPhase(next);
    frameWaiter = {
      phase: next,
      count,
      resolve: () => {
        frameWaiter = null;
        enterPhase('settling');
        resolve();
      },
    };
  });
async function press(...keys: string[]): Promise<void> {
  for (const key of keys) {
    terminal.type(key);
    // A key is read once the one before it was handled, as from a person at the keyboard.
    await sleep(20);
  }
}
async function until(what: string, check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 50) {
    if (waited > 60_000) throw new Error(`the terminal UI never showed ${what}; its screen ends with:\n${terminal.screen().slice(-2_000)}`);
    await sleep(50);
  }
}

const instance = render(createElement(TuiApp, { source: measured, actions: null }), {
  stdin: terminal.stdin,
  stdout: terminal.stdout,
  exitOnCtrlC: true,
  patchConsole: false,
  // As `colony tui` draws: at most 8 frames a second.
  maxFps: 8,
  onRender: ({ renderTime }) => phases[phase].inkRenderMs.push(renderTime),
});
await firstScreen;
// Not collected: a full collection here would hold up the reading it measures.
const atFirstScreen = memoryNow();

await until('the whole log', () => caughtUpAt !== null);
const catchUpMs = (caughtUpAt ?? started) - started;
const catchUpEvents = followed.lastSeq;
const afterCatchUp = memory();
const afterCatchUpAt = performance.now();
const loadAfterCatchUp = loadavg()[0] ?? 0;
process.stdout.write(`${JSON.stringify({ kind: 'caught-up', lastSeq: catchUpEvents })}\n`);
await until('the parent appending', () => followed.lastSeq >= catchUpEvents + settings.appendedBefore);

const appendFrom = { seq: followed.lastSeq, at: performance.now() };
await frames('tree', settings.frames.tree);
await press('s', 's');
await until('the tree sorted by cost', () => terminal.screen().includes('sorted by cost'));
await frames('cost', settings.frames.cost);

await press('s');
await until('the tree in tree order', () => terminal.screen().includes('sorted by tree'));
const rows = treeRows(source.view()?.agents ?? [], new Set(), 'tree');
const index = rows.findIndex((row) => row.agent.id === settings.pageAgentId);
if (index < 0) throw new Error(`agent ${settings.pageAgentId} is not in the tree`);
await press('g', ...Array.from({ length: index }, () => 'j'), '\r');
await until(`the page of ${settings.pageAgentId}`, () => terminal.screen().includes('1 transcript') && terminal.screen().includes(settings.pageAgentId) && terminal.screen().includes('▶ '));
await sleep(1_000);
await frames('page', settings.frames.page);
const pageLines = Number(/lines \d+-\d+ of (\d+)/.exec(terminal.screen())?.[1] ?? 0);
const appendRate = ((followed.lastSeq - appendFrom.seq) * 1_000) / (performance.now() - appendFrom.at);

const atEnd = memory();
const framesMs = performance.now() - afterCatchUpAt;
instance.unmount();
await store.close();
const figures: TuiChildFigures = {
  kind: 'figures',
  firstScreenMs: phases.opening.frameMs[0] ?? 0,
  catchUpMs,
  catchUpCpuMs,
  catchUpFrames: phases['catch-up'].frameMs.length,
  catchUpEvents,
  readsMs,
  phases,
  transcriptMs,
  transcriptFrameMs,
  pageEntries,
  pageLines,
  appendRate,
  atFirstScreen,
  afterCatchUp,
  atEnd,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  framesMs,
  loadAverages: [loadAfterCatchUp, loadavg()[0] ?? 0],
};
process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exit(0);
