import { execFileSync } from 'node:child_process';
import type { BenchRow, BenchSection } from './bench-row.js';
import type { CommandCpuFigures } from './command-cpu-child.js';

const CHILD = new URL('./command-cpu-child.ts', import.meta.url).pathname;
const WORKERS = 8;
/** Planners give each task the tests that cover it (the default), or the whole suite (`wholesuite=1`, how runs went before). */
const SCOPED = 'sim?seed=3&bug=0.1';
const WHOLE = 'sim?seed=3&bug=0.1&wholesuite=1';
const SIZES = [60, 200, 600] as const;
/** The whole-suite runs stop at 200 modules: at 600 they alone take most of an hour on two cores. */
const WHOLE_SIZES = [60, 200] as const;

function runChild(modules: number, model: string): CommandCpuFigures {
  process.stdout.write(`  ${modules} modules, ${model}…\n`);
  const output = execFileSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify({ modules, workers: WORKERS, model })], {
    encoding: 'utf8',
    maxBuffer: 16 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as CommandCpuFigures;
}

/** CPU seconds of agents' commands and acceptance checks per module on main at the end. */
function perModule(figures: CommandCpuFigures): number {
  return figures.landedModules === 0 ? 0 : (figures.agentCommandCpuS + figures.acceptanceCpuS) / figures.landedModules;
}

function describe(figures: CommandCpuFigures): string {
  const uncounted = figures.uncounted === 0 ? '' : `; ${figures.uncounted} COMMANDS NOT COUNTED`;
  return (
    `status ${figures.status}, ${figures.landedModules} modules on main, wall ${(figures.wallMs / 1000).toFixed(0)} s; ` +
    `agents' commands ${figures.agentCommandCpuS.toFixed(1)} s CPU over ${figures.agentCommands} commands, ` +
    `acceptance checks ${figures.acceptanceCpuS.toFixed(1)} s over ${figures.acceptanceChecks}, ` +
    `green loop (not counted above) ${figures.greenCpuS.toFixed(1)} s over ${figures.greenChecks} snapshots${uncounted}`
  );
}

/**
 * Test cost per landed module as the project grows: generated goals of 60, 200 and 600 modules at
 * the same worker count, in the sandbox (its cgroups count each command's CPU). Scoped (the
 * default) against the whole suite for every task (`wholesuite=1`), side by side in one run.
 */
export async function benchCommandCpu(): Promise<BenchSection> {
  const rows: BenchRow[] = [];
  const scoped = new Map<number, number>();
  for (const modules of SIZES) {
    const figures = runChild(modules, SCOPED);
    scoped.set(modules, perModule(figures));
    rows.push({
      name: `${modules} modules, tests that cover each task: CPU in agents' commands per landed module`,
      value: perModule(figures),
      unit: 's',
      note: `--workers ${WORKERS}, ${SCOPED}, bubblewrap; ${describe(figures)}`,
    });
  }
  const whole = new Map<number, number>();
  for (const modules of WHOLE_SIZES) {
    const figures = runChild(modules, WHOLE);
    whole.set(modules, perModule(figures));
    rows.push({
      name: `${modules} modules, the whole suite for every task: CPU in agents' commands per landed module`,
      value: perModule(figures),
      unit: 's',
      note: `--workers ${WORKERS}, ${WHOLE}, bubblewrap; ${describe(figures)}`,
    });
  }
  const ratio = (figures: Map<number, number>, large: number): number => (figures.get(large) ?? 0) / (figures.get(60) || 1);
  rows.push({
    name: 'tests that cover each task: 600 modules over 60, per landed module',
    value: ratio(scoped, 600),
    unit: '×',
    target: '≤ 2×',
    note: 'the test cost of a landed module must not grow with the project',
  });
  rows.push({
    name: 'the whole suite for every task: 200 modules over 60, per landed module',
    value: ratio(whole, 200),
    unit: '×',
    note: 'the baseline: every task running every test grows with the project',
  });
  rows.push({
    name: 'at 200 modules: whole suite over tests that cover each task, per landed module',
    value: (whole.get(200) ?? 0) / (scoped.get(200) || 1),
    unit: '×',
    note: 'what scoping saves at this size',
  });
  return { rows };
}
