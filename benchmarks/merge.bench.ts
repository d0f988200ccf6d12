import { spawnSync } from 'node:child_process';
import type { BenchRow, BenchSection, BenchSettings } from './bench-row.js';

/** What `colony bench merge --json` prints. */
interface MergeFigures {
  readonly mode: 'self-merge' | 'integrator';
  readonly mergers: number;
  readonly shared: number;
  readonly resolveMs: number;
  readonly seconds: number;
  readonly landed: number;
  readonly commitsPerHour: number;
  readonly lastQuarterPerHour: number;
  readonly mergersLanded: number;
  readonly retriesPerCommit: number;
  readonly conflicts: number;
  readonly resolvedMechanically: number;
  readonly resolvedByAgent: number;
  readonly waitShare: number;
  readonly waitSource: string;
  readonly failedMerges: number;
  readonly failures: readonly string[];
  readonly check: { readonly passed: boolean; readonly problems: readonly string[] };
}

type Run = { readonly ok: true; readonly figures: MergeFigures } | { readonly ok: false; readonly mode: string; readonly mergers: number; readonly shared: number; readonly error: string };

const COLONY = new URL('../bin/colony.js', import.meta.url).pathname;
const DEFAULT_MERGERS = [1, 4, 16, 64, 256];
const DEFAULT_SECONDS = 120;
const SHARES = [0, 0.1];
const MODES = ['self-merge', 'integrator'] as const;
const RESOLVE_MS = 10_000;
const SEED = 1;

/** One run of `colony bench merge` in a process of its own, so runs never share a process (or its git children). */
function runOnce(mode: (typeof MODES)[number], mergers: number, shared: number, seconds: number): Run {
  const args = ['bench', 'merge', '--mergers', String(mergers), '--shared', String(shared), '--seconds', String(seconds)];
  args.push('--resolve-ms', String(RESOLVE_MS), '--seed', String(SEED), '--json');
  if (mode === 'integrator') args.push('--integrator');
  const child = spawnSync(process.execPath, [COLONY, ...args], { encoding: 'utf8', maxBuffer: 16 * 2 ** 20, stdio: ['ignore', 'pipe', 'inherit'] });
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return { ok: true, figures: JSON.parse(last) as MergeFigures };
  } catch {
    return { ok: false, mode, mergers, shared, error: `colony bench merge exited ${child.status ?? child.signal} without figures` };
  }
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US');
const percent = (share: number): string => `${(share * 100).toFixed(0)}%`;

function tableRow(run: Run): string {
  if (!run.ok) return `| ${run.mode} | ${run.mergers} | ${run.shared} | ${run.error} |  |  |  |  |  |  |  |  |`;
  const f = run.figures;
  const check = f.check.passed ? 'passed' : `FAILED: ${f.check.problems[0] ?? ''}`;
  const failed = f.failedMerges > 0 ? `; ${f.failedMerges} merges failed` : '';
  return `| ${f.mode} | ${f.mergers} | ${f.shared} | ${count(f.commitsPerHour)} | ${count(f.lastQuarterPerHour)} | ${f.mergersLanded} of ${f.mergers} | ${f.retriesPerCommit.toFixed(2)} | ${percent(f.waitShare)} | ${count(f.conflicts)} | ${count(f.resolvedMechanically)} | ${count(f.resolvedByAgent)} | ${check}${failed} |`;
}

const met = (ok: boolean): string => (ok ? 'met' : 'missed');

/** The spec's targets at 64 mergers, next to the figures. */
function targetRows(runs: readonly Run[]): BenchRow[] {
  const find = (mode: string, shared: number): MergeFigures | undefined =>
    runs.find((run): run is Extract<Run, { ok: true }> => run.ok && run.figures.mode === mode && run.figures.mergers === 64 && run.figures.shared === shared)?.figures;
  const rows: BenchRow[] = [];
  const plain = find('self-merge', 0);
  const plainBaseline = find('integrator', 0);
  if (plain !== undefined) {
    rows.push({ name: 'self-merge, 64 mergers, F = 0: landed/h', value: plain.commitsPerHour, unit: 'commits/h', target: '≥ 50,000/h', note: met(plain.commitsPerHour >= 50_000) });
    rows.push({ name: 'self-merge, 64 mergers, F = 0: mergers that landed', value: plain.mergersLanded, unit: 'of 64', target: 'all 64', note: met(plain.mergersLanded === 64) });
  }
  if (plain !== undefined && plainBaseline !== undefined && plainBaseline.commitsPerHour > 0) {
    const ratio = plain.commitsPerHour / plainBaseline.commitsPerHour;
    rows.push({ name: 'self-merge over the integrator, 64 mergers, F = 0', value: ratio, unit: '×', target: '≥ 0.8× (no more than 20% below)', note: met(ratio >= 0.8) });
  }
  const shared = find('self-merge', 0.1);
  const sharedBaseline = find('integrator', 0.1);
  if (shared !== undefined) {
    const sustained = shared.commitsPerHour === 0 ? 0 : shared.lastQuarterPerHour / shared.commitsPerHour;
    rows.push({ name: 'self-merge, 64 mergers, F = 0.1: landed/h', value: shared.commitsPerHour, unit: 'commits/h', target: '≥ 10,000/h', note: met(shared.commitsPerHour >= 10_000) });
    rows.push({ name: 'self-merge, 64 mergers, F = 0.1: last quarter over the mean', value: 100 * sustained, unit: '%', target: '≥ 70%', note: met(sustained >= 0.7) });
  }
  if (shared !== undefined && sharedBaseline !== undefined && sharedBaseline.commitsPerHour > 0) {
    const ratio = shared.commitsPerHour / sharedBaseline.commitsPerHour;
    rows.push({ name: 'self-merge over the integrator, 64 mergers, F = 0.1', value: ratio, unit: '×', target: '≥ 3×', note: met(ratio >= 3) });
  }
  return rows;
}

/**
 * K mergers landing changes for a fixed time, by self-merge and through one integrator, at
 * F = 0 and 0.1: `npm run bench -- merge [--seconds S] [--mergers 1,4,16]`.
 */
export async function benchMerge(settings: BenchSettings): Promise<BenchSection> {
  const seconds = settings.seconds ?? DEFAULT_SECONDS;
  const runs: Run[] = [];
  for (const mergers of settings.mergers ?? DEFAULT_MERGERS) {
    for (const shared of SHARES) {
      for (const mode of MODES) {
        process.stdout.write(`  ${mode}, ${mergers} mergers, F = ${shared}, ${seconds} s…\n`);
        const run = runOnce(mode, mergers, shared, seconds);
        process.stdout.write(`    ${run.ok ? `${count(run.figures.commitsPerHour)}/h, check ${run.figures.check.passed ? 'passed' : 'FAILED'}` : run.error}\n`);
        runs.push(run);
      }
    }
  }
  const details = [
    `Each run: \`colony bench merge --mergers K --shared F --seconds ${seconds} --resolve-ms ${RESOLVE_MS} --seed ${SEED} [--integrator] --json\` in a process of its own, on a fresh scratch repository of 2,001 files. Rates count changes that landed within the window; "check" is the end-of-run check that main holds every landed change exactly once.`,
    '',
    '| mode | K | F | landed/h | last quarter/h | mergers landed | retries/commit | waitShare | conflicts | resolved mechanically | resolved by agent | check |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map(tableRow),
  ];
  return { rows: targetRows(runs), details: details.join('\n') };
}
