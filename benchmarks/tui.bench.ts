import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import type { EventInput } from '../src/store/events/event-store.js';
import type { BenchRow, BenchSection } from './bench-row.js';
import { createLargeRun, type LargeRun, type LargeRunShape } from './large-run.js';
import { writeLargeRun, type LogWriter } from './large-run-log.js';
import type { FrameFigures, TuiChildFigures, TuiChildSettings } from './tui-child.js';

const CHILD = new URL('./tui-child.ts', import.meta.url).pathname;
const SHAPE: LargeRunShape = { events: 1_000_000, agents: 500, subPlanners: 20, workersAtOnce: 160, stillRunning: 150, seed: 2026 };
/** The page opened: a running worker with about this many events in the log. */
const PAGE_EVENTS = 2_000;
/** Milliseconds between moments of the generated run: a million events over a little more than two hours. */
const GAP_MS = 8;
const APPEND_PER_SECOND = 2_000;
const APPEND_EVERY_MS = 100;
const FRAME_TARGET_MS = 50;
const MEMORY_TARGET_MB = 300;

/**
 * Appends the run's next events at a steady rate, stamped with the clock, until stopped;
 * stopping waits for the last flush and rejects with the first that failed.
 */
function appendSteadily(store: LogWriter, run: LargeRun): () => Promise<number> {
  let appended = 0;
  // Each flush after the one before, so a slow one delays the next instead of piling up.
  let flushed: Promise<void> = Promise.resolve();
  let failure: { readonly error: unknown } | null = null;
  const perTurn = (APPEND_PER_SECOND * APPEND_EVERY_MS) / 1_000;
  const timer = setInterval(() => {
    const batch: EventInput[] = [];
    while (batch.length < perTurn) {
      const moment = run.next(Date.now());
      if (moment.length === 0) break;
      batch.push(...moment);
    }
    store.appendMany(batch);
    flushed = flushed.then(() => store.flush()).catch((error: unknown) => {
      failure ??= { error };
    });
    appended += batch.length;
  }, APPEND_EVERY_MS);
  return async () => {
    clearInterval(timer);
    await flushed;
    if (failure !== null) throw failure.error;
    return appended;
  };
}

/** Runs the measuring child; `onCaughtUp` is called when it has read the whole log. */
function runChild(settings: TuiChildSettings, onCaughtUp: () => void): Promise<TuiChildFigures> {
  // Ink draws differently on a CI machine; the child draws as on a person's terminal.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'CI' && name !== 'CONTINUOUS_INTEGRATION'));
  // As bin/colony.js runs the UI: React's production build.
  env.NODE_ENV ??= 'production';
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let figures: TuiChildFigures | null = null;
  // Kept to say why the child failed; Ink's last words (showing the cursor again) are not shown.
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-8_000);
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: { kind?: string };
    try {
      message = JSON.parse(line) as { kind?: string };
    } catch {
      // Not one of its messages: kept with its errors, to say what it printed.
      errors = (errors + line + '\n').slice(-8_000);
      return;
    }
    if (message.kind === 'caught-up') onCaughtUp();
    else if (message.kind === 'figures') figures = message as TuiChildFigures;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (figures !== null) resolve(figures);
      else reject(new Error(`the terminal UI's benchmark process exited with ${code} without its figures:\n${errors}`));
    });
  });
}

function quantile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

function frameRows(label: string, figures: FrameFigures, how: string): BenchRow[] {
  const { frameMs, frameCpuMs, tickMs, inkRenderMs } = figures;
  const met = (value: number) => (value < FRAME_TARGET_MS ? 'met' : 'MISSED');
  const detail = `${frameMs.length} frames; CPU time of a frame p50 ${quantile(frameCpuMs, 0.5).toFixed(1)} ms, p95 ${quantile(frameCpuMs, 0.95).toFixed(1)} ms; the event loop busy at most ${figures.longestBlockMs.toFixed(0)} ms at a stretch, the longest garbage collection ${figures.longestGcMs.toFixed(0)} ms; tick p50 ${quantile(tickMs, 0.5).toFixed(1)} ms, max ${Math.max(...tickMs).toFixed(1)} ms; Ink's render p50 ${quantile(inkRenderMs, 0.5).toFixed(1)} ms`;
  return [
    { name: `${label}: frame p50`, value: quantile(frameMs, 0.5), unit: 'ms', target: `< ${FRAME_TARGET_MS} ms: ${met(quantile(frameMs, 0.5))}`, note: `${how}; ${detail}` },
    { name: `${label}: frame p95`, value: quantile(frameMs, 0.95), unit: 'ms', target: `< ${FRAME_TARGET_MS} ms: ${met(quantile(frameMs, 0.95))}` },
    { name: `${label}: frame max`, value: Math.max(...frameMs), unit: 'ms', target: `< ${FRAME_TARGET_MS} ms: ${met(Math.max(...frameMs))}` },
  ];
}

/**
 * The terminal UI attached to a run of 500 agents and a log of a million events: a log written
 * into SQLite as colony writes one, then a fresh process following it as `colony tui` does,
 * timing the cold read of the whole log and each frame while another process appends.
 */
export async function benchTui(options: { readonly events?: number; readonly frames?: TuiChildSettings['frames'] } = {}): Promise<BenchSection> {
  const shape: LargeRunShape = { ...SHAPE, events: options.events ?? SHAPE.events };
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-tui-'));
  try {
    const path = join(dir, 'events.db');
    const store = openSqliteEventStore(path);
    const run = createLargeRun(shape);
    process.stdout.write(`  writing a log of ${shape.events.toLocaleString('en-US')} events of ${SHAPE.agents} agents…\n`);
    const writeStart = performance.now();
    const written = await writeLargeRun(store, run, { events: shape.events, startTs: Date.now() - shape.events * GAP_MS - 600_000, gapMs: GAP_MS, seed: shape.seed + 2 });
    const writeS = (performance.now() - writeStart) / 1_000;
    const agents = run.agents();
    const logMb = statSync(path).size / 2 ** 20;
    const pageAgentId = run.runningWorkerNear(PAGE_EVENTS);
    if (pageAgentId === null) throw new Error('the generated run has no running worker to open');
    const pageAgentEvents = run.eventsOf(pageAgentId);
    process.stdout.write(`  ${written.events.toLocaleString('en-US')} events, ${logMb.toFixed(0)} MB, in ${writeS.toFixed(0)} s; following it…\n`);

    const appending: { stop: (() => Promise<number>) | null } = { stop: null };
    const settings: TuiChildSettings = { path, pageAgentId, columns: 160, rows: 50, frames: options.frames ?? { tree: 200, cost: 100, page: 100 }, appendedBefore: APPEND_PER_SECOND };
    const figures = await runChild(settings, () => {
      appending.stop = appendSteadily(store, run);
    }).finally(async () => {
      try {
        await appending.stop?.();
      } finally {
        await store.close();
      }
    });

    const catchUp = figures.phases['catch-up'];
    const rereads = figures.transcriptFrameMs.slice(1);
    const memoryMet = (mb: number) => `< ${MEMORY_TARGET_MB} MB: ${mb < MEMORY_TARGET_MB ? 'met' : 'MISSED'}`;
    const steady = `while another process appends ${APPEND_PER_SECOND.toLocaleString('en-US')} events/s (${Math.round(figures.appendRate).toLocaleString('en-US')} read a second); 160x50 terminal, a frame every 250 ms, as colony tui`;
    const rows: BenchRow[] = [
      {
        name: 'the log',
        value: written.events,
        unit: 'events',
        note: `one run: ${agents.started} agents (a root planner, ${SHAPE.subPlanners} sub-planners, ${agents.started - 1 - SHAPE.subPlanners} workers), ${agents.workersRunning} workers still running with a tool call in flight; ${logMb.toFixed(0)} MB of SQLite, written with appendMany in ${writeS.toFixed(0)} s`,
      },
      { name: 'cold catch-up: the first screen', value: figures.firstScreenMs, unit: 'ms', note: 'the first frame: the first part of the log read, and the whole screen made for the first time' },
      { name: 'cold catch-up: the whole log read', value: figures.catchUpMs / 1_000, unit: 's', note: `${figures.catchUpEvents.toLocaleString('en-US')} events, ${Math.round(figures.catchUpEvents / (figures.catchUpMs / 1_000)).toLocaleString('en-US')} events/s (${(figures.catchUpCpuMs / 1_000).toFixed(1)} s of CPU), while ${figures.catchUpFrames} frames were drawn` },
      { name: 'cold catch-up: worst frame', value: Math.max(...catchUp.frameMs), unit: 'ms', target: `< ${FRAME_TARGET_MS} ms: ${Math.max(...catchUp.frameMs) < FRAME_TARGET_MS ? 'met' : 'MISSED'}`, note: `frame p50 ${quantile(catchUp.frameMs, 0.5).toFixed(0)} ms while reading, CPU time of a frame at most ${Math.max(...catchUp.frameCpuMs).toFixed(0)} ms; between frames ${figures.readsMs.length} reads, p50 ${quantile(figures.readsMs, 0.5).toFixed(1)} ms, max ${Math.max(0, ...figures.readsMs).toFixed(1)} ms; the event loop busy at most ${catchUp.longestBlockMs.toFixed(0)} ms at a stretch, the longest garbage collection ${catchUp.longestGcMs.toFixed(0)} ms` },
      ...frameRows('live, agent tree', figures.phases.tree, steady),
      ...frameRows('live, agent tree sorted by cost', figures.phases.cost, 'the same, after s s'),
      ...frameRows('live, an agent\'s page open', figures.phases.page, `the transcript of ${pageAgentId}, a running worker: ${pageAgentEvents.toLocaleString('en-US')} events when the log was written, growing as the other process appends (${figures.pageEntries} entries, ${figures.pageLines.toLocaleString('en-US')} lines at the end)`),
      {
        name: 'live, an agent\'s page: opening it',
        value: figures.transcriptFrameMs[0] ?? 0,
        unit: 'ms',
        target: `< ${FRAME_TARGET_MS} ms: ${(figures.transcriptFrameMs[0] ?? 0) < FRAME_TARGET_MS ? 'met' : 'MISSED'}`,
        note: `its ${pageAgentEvents.toLocaleString('en-US')} events read (${(figures.transcriptMs[0] ?? 0).toFixed(1)} ms), laid out and drawn`,
      },
      {
        name: 'live, an agent\'s page: reading it again',
        value: Math.max(...rereads),
        unit: 'ms',
        target: `< ${FRAME_TARGET_MS} ms: ${Math.max(...rereads) < FRAME_TARGET_MS ? 'met' : 'MISSED'}`,
        note: `the worst of ${rereads.length} re-reads (once a second) with what they drew; the read alone p50 ${quantile(figures.transcriptMs.slice(1), 0.5).toFixed(1)} ms`,
      },
      {
        name: 'the machine\'s load while measuring',
        value: Math.max(...figures.loadAverages),
        unit: `on ${cpus().length} cores`,
        note: `the 1-minute load average after catch-up (${figures.loadAverages[0].toFixed(1)}) and at the end (${figures.loadAverages[1].toFixed(1)}), this benchmark's own processes and any others: a frame's wall time counts the time it waited for a core, its CPU time does not`,
      },
      { name: 'memory at the first screen: RSS', value: figures.atFirstScreen.rssMb, unit: 'MB', note: `heap used ${figures.atFirstScreen.heapUsedMb.toFixed(0)} MB: Node, the TypeScript loader, React, Ink and SQLite before the log is read` },
      { name: 'memory after catch-up: RSS', value: figures.afterCatchUp.rssMb, unit: 'MB', target: memoryMet(figures.afterCatchUp.rssMb), note: `heap used ${figures.afterCatchUp.heapUsedMb.toFixed(0)} MB, ${figures.afterCatchUp.retainedMb.toFixed(0)} MB of it kept after a full collection` },
      {
        name: 'memory at the end: RSS',
        value: figures.atEnd.rssMb,
        unit: 'MB',
        target: memoryMet(figures.atEnd.rssMb),
        note: `heap used ${figures.atEnd.heapUsedMb.toFixed(0)} MB, ${figures.atEnd.retainedMb.toFixed(0)} MB of it kept after a full collection, ${(figures.framesMs / 60_000).toFixed(1)} min of frames after catch-up (and the full collection taken then)`,
      },
      { name: 'memory: peak RSS', value: figures.peakRssMb, unit: 'MB', target: memoryMet(figures.peakRssMb), note: 'the process\'s highest resident set, catch-up included' },
    ];
    return { rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
