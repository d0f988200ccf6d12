import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { ColonyEvent } from '../src/events/event-types.js';
import { createExampleRepository, runCli } from '../test/testing/example-repository.js';
import { checkInFull } from './check-in-full.js';
import { GREEN_FIGURE_EVENT_TYPES, greenRunFigures, type GreenRunFigures } from './green-run-figures.js';

/**
 * One `colony run` with the green loop, through the real CLI, in a process of its own so its
 * memory and CPU are its own: `tsx benchmarks/green-run-child.ts '<json settings>'` prints one JSON
 * line of figures (GreenChildFigures).
 */
interface Settings {
  readonly example: string;
  readonly model: string;
  readonly workers: number;
  readonly greenEvery: string;
}

/** What `colony status --json` says of the green branch (src/observe/status/run-status.ts, GreenStatus). */
interface StatusGreen {
  readonly run: { readonly state: string };
  readonly green: { readonly commit: string | null; readonly redShare: number; readonly snapshots: number; readonly meanTimeToGreenS: number | null; readonly redSnapshots: number } | null;
}

export interface GreenChildFigures extends GreenRunFigures {
  readonly exitCode: number;
  /** The end of what the run printed to stderr when it did not exit 0. */
  readonly stderrTail: string;
  readonly runState: string;
  readonly redShare: number | null;
  readonly meanTimeToGreenS: number | null;
  readonly statusSnapshots: number | null;
  readonly wallMs: number;
  readonly loadAtStart: number;
  readonly peakRssMb: number;
  readonly harnessCpuS: number;
  readonly childrenCpuS: number;
  /** Moves of the green branch whose `from` is not an ancestor of its `to`. */
  readonly backwardMoves: number;
  /** The green branch ends on main's last commit. */
  readonly greenIsMain: boolean;
  /** The run's reddest snapshot (or its last, with none red), held against its check run again with nothing cut; null when there was none. */
  readonly lastSnapshot: LastSnapshot | null;
}

export interface LastSnapshot {
  readonly commit: string;
  readonly trigger: string;
  readonly passed: boolean;
  /** Whether the check passed when run again in full: a check that passes only sometimes shows here. */
  readonly passedInFull: boolean;
  /** Failure lines the snapshot recorded, and those the check prints in full. */
  readonly seen: number;
  readonly printed: number;
  readonly outputBytes: number;
  /** Failure lines printed that the snapshot did not record (the first few). */
  readonly unseen: readonly string[];
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const repo = createExampleRepository(settings.example);
const loadAtStart = loadavg()[0] ?? 0;

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 200);
const started = performance.now();
const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', settings.model, '--workers', String(settings.workers), '--green-every', settings.greenEvery]);
const wallMs = performance.now() - started;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const harness = process.cpuUsage();
// Linux counts the CPU of reaped child processes: git, the agents' commands, the green checks.
const stat = readFileSync('/proc/self/stat', 'utf8');
const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
const childrenCpuS = (Number(fields[13]) + Number(fields[14])) / 100;

const listed = await runCli(['events', '--repo', repo.dir, '--json', '--type', GREEN_FIGURE_EVENT_TYPES.join(',')]);
const events = listed.stdout
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line) as ColonyEvent);
const figures = greenRunFigures(events);
const statusRun = await runCli(['status', '--repo', repo.dir, '--json']);
const status = statusRun.code === 0 ? (JSON.parse(statusRun.stdout) as StatusGreen) : null;

const isAncestor = (from: string, to: string): boolean => {
  try {
    repo.git('merge-base', '--is-ancestor', from, to);
    return true;
  } catch {
    return false;
  }
};
const backwardMoves = figures.advanced.filter((move) => move.from !== null && !isAncestor(move.from, move.to)).length;
const revision = (name: string): string | null => {
  try {
    return repo.git('rev-parse', '--verify', '--quiet', name).trim();
  } catch {
    return null;
  }
};
const greenIsMain = revision('green') !== null && revision('green') === revision('main');

// The red snapshot with the most failure lines is the hardest to have read in full; the last one when none was red.
const snapshots = events.flatMap((event) => (event.type === 'green.checked' ? [event] : []));
const reddest = snapshots.filter((event) => !event.data.passed).sort((a, b) => b.data.failures.length - a.data.failures.length)[0];
const last = reddest ?? snapshots.at(-1);
let lastSnapshot: LastSnapshot | null = null;
if (last !== undefined && last.type === 'green.checked') {
  const full = await checkInFull(repo.dir, last.data.commit, last.data.command);
  lastSnapshot = {
    commit: last.data.commit,
    trigger: last.data.trigger,
    passed: last.data.passed,
    passedInFull: full.passed,
    seen: last.data.failures.length,
    printed: full.failures.length,
    outputBytes: full.outputBytes,
    unseen: full.failures.filter((line) => !last.data.failures.includes(line)).slice(0, 5),
  };
}

const childFigures: GreenChildFigures = {
  ...figures,
  exitCode: run.code,
  stderrTail: run.code === 0 ? '' : run.stderr.trim().split('\n').slice(-5).join(' / '),
  runState: status?.run.state ?? `no status: ${statusRun.stderr.trim()}`,
  redShare: status?.green?.redShare ?? null,
  meanTimeToGreenS: status?.green?.meanTimeToGreenS ?? null,
  statusSnapshots: status?.green?.snapshots ?? null,
  wallMs,
  loadAtStart,
  peakRssMb: peakRss / 2 ** 20,
  harnessCpuS: (harness.user + harness.system) / 1e6,
  childrenCpuS,
  backwardMoves,
  greenIsMain,
  lastSnapshot,
};
process.stdout.write(`${JSON.stringify(childFigures)}\n`);
repo.cleanup();
