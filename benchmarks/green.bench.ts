import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { CHECK_FAILURE_LINES, CHECK_OUTPUT_BYTES } from '../src/orchestrator/green/green-snapshot.js';
import type { BenchRow, BenchSection } from './bench-row.js';
import type { GreenChildFigures, LastSnapshot } from './green-run-child.js';

const CHILD = new URL('./green-run-child.ts', import.meta.url).pathname;

interface GreenRun {
  readonly label: string;
  readonly example: string;
  readonly model: string;
  readonly workers: number;
  readonly greenEvery: string;
}

/** Workers are told to merge untested (`skiptests=1`), so 30% of first attempts land wrong and main really goes red. */
const RUNS: readonly GreenRun[] = [
  ...[1, 2, 3].map((seed) => ({ label: `toolbox seed ${seed}`, example: 'toolbox', model: `sim?seed=${seed}&bug=0.3&skiptests=1`, workers: 4, greenEvery: '1' })),
  { label: 'stdlib', example: 'stdlib', model: 'sim?seed=3&bug=0.3&skiptests=1&latency=200..2000', workers: 16, greenEvery: '5,1m' },
];

const RED_SHARE_NOTE =
  "skiptests=1 sends every Build task to main untested, so every wrong first attempt (bug=0.3) lands and main stays red until a snapshot sees it, a bisect names it, its planner is told and a fix lands; the share follows the bug rate, the workers landing at once and the fix's round trip, so it has no target";

function runChild(run: GreenRun): GreenChildFigures {
  const output = execFileSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(run)], {
    encoding: 'utf8',
    maxBuffer: 16 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as GreenChildFigures;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Fix-up messages that named a break, per break; 0 when the sim broke nothing. */
function fixupsPerBreak(figures: GreenChildFigures): number {
  return figures.breaks.length === 0 ? 0 : figures.reportsPerBreak.reduce((sum, told) => sum + told, 0) / figures.breaks.length;
}

function verdicts(figures: GreenChildFigures): string {
  const told = figures.reportsPerBreak;
  return [
    `status ${figures.runState} (exit ${figures.exitCode}${figures.stderrTail === '' ? '' : `: ${figures.stderrTail}`}), release snapshot ${figures.releasePassed === null ? 'NOT TAKEN' : figures.releasePassed ? 'passed' : 'FAILED'}`,
    `${figures.matched} of ${figures.breaks.length} breaks the sim made on purpose bisected to exactly their commits${figures.otherFirstBad.length === 0 ? ', no other commit blamed' : `, ${figures.otherFirstBad.length} OTHER commit(s) blamed`}`,
    `fix-up messages per break ${told.length === 0 ? 'none' : `${Math.min(...told)} to ${Math.max(...told)}`} (${figures.reported} reported, ${figures.fixupsReceived} taken in by planners)`,
    `green moved ${figures.advanced.length} time(s), ${figures.advancedToUnchecked === 0 ? 'only to passing commits' : `${figures.advancedToUnchecked} time(s) TO A COMMIT NO PASSING CHECK SAW`}, ${figures.backwardMoves === 0 ? 'always forward' : `${figures.backwardMoves} time(s) NOT FORWARD`}, ${figures.greenIsMain ? 'ends on main' : 'DOES NOT END ON MAIN'}${figures.blocked.length === 0 ? '' : `; blocked: ${figures.blocked.join('; ')}`}`,
  ].join('; ');
}

/** Whether the reddest snapshot (or the last, with none red) saw every failure line its check prints, run again in full after the run. */
function lastSnapshotRow(label: string, last: LastSnapshot | null): BenchRow {
  const name = `${label}: failure lines the reddest snapshot saw`;
  if (last === null) return { name, value: 0, unit: 'of 0 printed', target: '= all', note: 'NO SNAPSHOT WAS TAKEN' };
  const kept = `colony keeps ${CHECK_OUTPUT_BYTES / 2 ** 20} MiB of a check's output (its first and last half past that) and at most ${CHECK_FAILURE_LINES} failure lines`;
  return {
    name,
    value: last.seen,
    unit: `of ${last.printed} printed`,
    target: '= all',
    note: `the ${last.trigger} snapshot of ${last.commit.slice(0, 12)} (${last.passed ? 'passed' : 'failed'}), its check run again in full after the run ${last.passedInFull ? 'passed' : 'failed'}: ${last.outputBytes.toLocaleString('en-US')} bytes of output; ${kept}${last.unseen.length === 0 ? '' : `; NOT SEEN: ${last.unseen.join(' | ')}`}`,
  };
}

function rowsOf(run: GreenRun, figures: GreenChildFigures): BenchRow[] {
  const name = (measure: string) => `${run.label}: ${measure}`;
  const gaps = figures.commitsBetweenGreen;
  const seconds = (ms: number | null) => (ms === null ? 0 : ms / 1000);
  return [
    {
      name: name('wall time'),
      value: figures.wallMs / 1000,
      unit: 's',
      target: 'ends done, release snapshot passing',
      note: `${run.example}, --model '${run.model}' --workers ${run.workers} --green-every ${run.greenEvery}, load average ${figures.loadAtStart.toFixed(1)} at its start (2 cores); ${verdicts(figures)}; ${figures.landed} commits landed; peak ${figures.peakRssMb.toFixed(0)} MB resident, CPU: harness ${figures.harnessCpuS.toFixed(0)} s, git, tests and checks ${figures.childrenCpuS.toFixed(0)} s`,
    },
    { name: name('main red'), value: 100 * (figures.redShare ?? 0), unit: '% of the run', note: `colony status green.redShare${figures.redShare === null ? ' (NONE REPORTED)' : ''}; ${RED_SHARE_NOTE}` },
    { name: name('mean time to green'), value: figures.meanTimeToGreenS ?? 0, unit: 's', note: figures.meanTimeToGreenS === null ? 'no red period closed' : 'colony status green.meanTimeToGreenS: mean length of the red periods that closed' },
    { name: name('red snapshots'), value: figures.redSnapshots, unit: `of ${figures.snapshots} snapshots`, note: `green.checked events that failed; colony status counts ${figures.statusSnapshots ?? 'none'}` },
    { name: name('distinct failures told'), value: figures.reported, unit: 'failures', note: `green.reported; ${figures.bisects} bisects, ${figures.knownBisects} of them of a failure already told` },
    { name: name('bisect checks per break'), value: figures.meanBisectChecks ?? 0, unit: 'checks', note: 'mean of green.bisected.checks: commits the check ran on to find the first bad one' },
    { name: name('snapshot check, mean duration'), value: seconds(figures.meanCheckMs), unit: 's', note: 'mean of green.checked.durationMs' },
    {
      name: name('commits landed between green points'),
      value: mean(gaps),
      unit: 'commits',
      note:
        gaps.length === 0
          ? `GREEN NEVER MOVED: all ${figures.landedAfterLastGreen} commits landed with no green point after the run's start`
          : `mean; at most ${Math.max(...gaps)}; from green.advanced and merge.landed in the log's order, the run's start counted as the first green point (${gaps.length} move(s) of green; ${figures.landedAfterLastGreen} landed after its last move)`,
    },
    { name: name('breaks bisected to the commit the sim broke'), value: figures.matched, unit: `of ${figures.breaks.length} breaks`, target: '= all', note: verdicts(figures) },
    { name: name('fix-up messages per break'), value: fixupsPerBreak(figures), unit: 'messages', target: '= 1', note: `green.reported naming a break's commit, per break (${figures.reportsPerBreak.join(', ')})` },
    { name: name('green moved only to passing commits'), value: figures.advancedToUnchecked === 0 ? 1 : 0, unit: 'yes = 1', target: '= 1', note: `every green.advanced to a commit a passing green.checked saw; ${figures.advanced.length} move(s)` },
    lastSnapshotRow(run.label, figures.lastSnapshot),
  ];
}

/**
 * The green loop on runs whose workers merge untested: how long main stays red and how fast it
 * comes back, what a snapshot and a bisect cost, and whether each break the sim made on purpose
 * is found at exactly its commit and told once.
 */
export async function benchGreen(): Promise<BenchSection> {
  const startLoad = loadavg().map((load) => load.toFixed(1)).join(', ');
  const rows: BenchRow[] = [];
  const excerpts: string[] = [];
  let broken = 0;
  let matched = 0;
  for (const run of RUNS) {
    process.stdout.write(`  ${run.label}, --workers ${run.workers}, --green-every ${run.greenEvery}…\n`);
    const figures = runChild(run);
    rows.push(...rowsOf(run, figures));
    broken += figures.breaks.length;
    matched += figures.matched;
    excerpts.push(...figures.excerpts.map((line) => `- ${run.label}: ${line}`));
  }
  rows.push({ name: 'all runs: breaks bisected to the commit the sim broke', value: matched, unit: `of ${broken} breaks`, target: '= all', note: 'a break: a commit a sim worker landed with a module it named in its handoff as wrong on purpose' });
  const details = [
    `Each run is a child process running \`colony run\` through the CLI on a fresh git copy of the example; its events are read back with \`colony events --json\` and \`colony status --json\`. Load average when the suite started: ${startLoad} (2 cores; other work may share the machine).`,
    '',
    excerpts.length === 0 ? 'Every break was bisected to its commit and told once; no other commit was blamed.' : ['From the log: breaks not bisected or not told once, and bisects that blamed a commit that is no break (with the files that commit changed):', '', ...excerpts].join('\n'),
  ].join('\n');
  return { rows, details };
}
