import { execFileSync } from 'node:child_process';
import type { BenchRow } from './bench-row.js';

interface ChildFigures {
  readonly ok: boolean;
  readonly status: string;
  readonly checkPassed: boolean | null;
  readonly wallMs: number;
  readonly landed: number;
  readonly conflicts: number;
  readonly agents: number;
  readonly peakAgents: number;
  readonly peakWorkers: number;
  readonly peakRssMb: number;
  /** CPU seconds of the harness process itself (agents, store, sim). */
  readonly harnessCpuS: number;
  /** CPU seconds of its child processes: git, the project's tests. */
  readonly childrenCpuS: number;
  /** Commits the workers' handoffs report as landed, and how many of them main lacks (lost work). */
  readonly handoffCommits: number;
  readonly lostCommits: number;
}

const CHILD = new URL('./tree-run-child.ts', import.meta.url).pathname;
const LATENCY_MODEL = 'sim?seed=3&latency=200..2000';

function runChild(settings: object): ChildFigures {
  const output = execFileSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(settings)], {
    encoding: 'utf8',
    maxBuffer: 16 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const last = output.trim().split('\n').at(-1) ?? '{}';
  return JSON.parse(last) as ChildFigures;
}

function describeRun(figures: ChildFigures): string {
  return [
    `status ${figures.status}, check ${figures.checkPassed === true ? 'passed' : 'FAILED'}`,
    `${figures.landed} commits landed, ${figures.conflicts} merge conflicts handed to agents, ${figures.agents} agents, peak ${figures.peakWorkers} workers at once`,
    `CPU: harness ${figures.harnessCpuS.toFixed(0)} s, git and tests ${figures.childrenCpuS.toFixed(0)} s`,
    figures.lostCommits === 0
      ? `no lost work: all ${figures.handoffCommits} commits named in handoffs are on main`
      : `LOST WORK: ${figures.lostCommits} of ${figures.handoffCommits} commits named in handoffs are not on main`,
  ].join('; ');
}

/** The large example built by a tree of sim agents at several concurrencies, with model-like latency. */
export function benchTreeRun(): Promise<BenchRow[]> {
  return benchTreeAt([64, 16, 4, 1]);
}

/** The large example at 64 workers only: green, and no commit a handoff names missing from main. */
export function benchTreeAt64(): Promise<BenchRow[]> {
  return benchTreeAt([64]);
}

async function benchTreeAt(workerCounts: readonly number[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const perHour: Record<number, number> = {};
  for (const workers of workerCounts) {
    process.stdout.write(`  stdlib with ${workers} worker(s)…\n`);
    const figures = runChild({ example: 'stdlib', workers, model: LATENCY_MODEL });
    const hours = figures.wallMs / 3_600_000;
    perHour[workers] = figures.landed / hours;
    rows.push({ name: `stdlib, --workers ${workers}: wall time`, value: figures.wallMs / 1000, unit: 's', note: `${LATENCY_MODEL}; ${describeRun(figures)}` });
    rows.push({ name: `stdlib, --workers ${workers}: landed commits/hour`, value: figures.landed / hours, unit: 'commits/h' });
    rows.push({
      name: `stdlib, --workers ${workers}: harness CPU share of one core`,
      value: (100 * figures.harnessCpuS) / (figures.wallMs / 1000),
      unit: '%',
      note: 'the harness process alone (agent loops, store, sim); git and the tests run in child processes',
    });
  }
  const single = perHour[1];
  const wide = perHour[64];
  if (single === undefined || wide === undefined) return rows;
  rows.push({
    name: 'stdlib: commits/hour at 64 workers over 1 worker',
    value: wide / single,
    unit: '×',
    target: '≥ 20×',
    note: 'the harness must not be the bottleneck',
  });
  return rows;
}

/** Peak memory of the harness with 500 sim agents alive at once. */
export async function benchManyAgents(): Promise<BenchRow[]> {
  const model = 'sim?seed=5&latency=4000..6000';
  const figures = runChild({ generatedModules: 500, workers: 500, model });
  return [
    {
      name: '500 workers at once: peak resident memory of the harness',
      value: figures.peakRssMb,
      unit: 'MB',
      target: '< 1,024 MB',
      note: `500 generated modules, --workers 500, ${model}; peak ${figures.peakAgents} agents alive at once (${figures.peakWorkers} workers); ${describeRun(figures)}`,
    },
    { name: '500 workers at once: peak agents alive at once', value: figures.peakAgents, unit: 'agents' },
  ];
}

/** The large example with every fault the sim has: it must still end green. */
export async function benchTreeWithFaults(): Promise<BenchRow[]> {
  const model = 'sim?seed=9&bug=0.2&malformed=0.05&crash=0.05';
  const figures = runChild({ example: 'stdlib', workers: 16, model });
  return [
    {
      name: 'stdlib with faults, --workers 16: wall time',
      value: figures.wallMs / 1000,
      unit: 's',
      target: 'ends done, check passed',
      note: `${model}; ${describeRun(figures)}`,
    },
  ];
}
