import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BenchRow } from './bench-row.js';
import { unmountUnder } from '../test/testing/example-repository.js';
import { writeLongScenario } from '../src/sim/scenario/long-scenario.js';

/**
 * A goal three times the root planner's context window: 600 modules (the long scenario's) under
 * a section of notes, one paragraph a module, some 900 KB in all, built by `colony run` with up
 * to 500 workers. The run is the real command in a process of its own, so its peak memory
 * (VmHWM) is the harness's alone. `large-goal-stop` sends another run SIGTERM while about a
 * hundred workers are busy: how long it takes to end stopped, whether anything was claimed after
 * the signal, and how far each task's attempt count moved.
 */

const MODULES = 600;
const WORKERS = 500;
const BIN = new URL('../bin/colony.js', import.meta.url).pathname;
/**
 * Workers running at once when the second run is sent SIGTERM. On 2 cores the run keeps about a
 * hundred busy (workspaces, merges and test runs take the CPU), so the signal comes at that or,
 * failing it, once a third of the modules have landed.
 */
const BUSY_BEFORE_STOP = 100;
const LANDED_BEFORE_STOP = MODULES / 3;

function note(index: number): string {
  const number = String(index + 1).padStart(4, '0');
  return (
    `- Module ${number}: keep the helper a pure function of its arguments, with no state kept between calls and nothing read from the environment, ` +
    'the clock or the file system. Its test checks every case the colony-spec lists and nothing more, so a later change to a case shows as one failing test. ' +
    'It is re-exported from the index with the others, its name unique among them, so the index stays one line a module. ' +
    'Its file holds that one export and no helper of its own, so two modules never share code that a change to one could break for the other. ' +
    'Numbers are plain JavaScript numbers, text is plain strings, lists are arrays: no classes, no promises, no exceptions for the listed cases. ' +
    'When a case looks surprising it is still the contract: the cases are what the tests check, and the tests must pass on main. ' +
    'Keep the file short and plain: a comment above the export only when a case needs a reason, no logging, no defaults beyond what the cases show, ' +
    'and the same style as its neighbours, so that a reader can take in any module of the project at a glance and trust the others to read alike.'
  );
}

async function largeGoal(dir: string): Promise<{ repo: string; goal: string; tokens: number; bytes: number }> {
  const repo = join(dir, 'repo');
  const { goalPath } = await writeLongScenario(repo, MODULES);
  const written = readFileSync(goalPath, 'utf8');
  const fence = written.indexOf('```colony-spec');
  const text = `${written.slice(0, fence)}## Notes on each module\n\n${Array.from({ length: MODULES }, (_, index) => note(index)).join('\n')}\n\n${written.slice(fence)}`;
  const goal = join(dir, 'GOAL.md');
  writeFileSync(goal, text);
  return { repo, goal, tokens: Math.ceil(text.length / 4), bytes: Buffer.byteLength(text) };
}

interface RunFigures {
  readonly code: number | null;
  readonly wallMs: number;
  readonly peakRssMb: number;
  readonly outcome: { status?: string; check?: { passed?: boolean } | null } | null;
  readonly stop: StopFigures | null;
}

interface StopFigures {
  readonly signalledAt: number;
  readonly busyWorkers: number;
  readonly stoppedAfterMs: number;
  readonly claimsAfter: number;
  readonly lastClaimBeforeMs: number | null;
  readonly grewByMoreThanOne: number;
  readonly tasksAtStop: number;
}

function statusKb(pid: number, field: string): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/** Workers running now, and modules landed so far. */
function progress(database: string): { busy: number; landed: number } {
  try {
    const reader = new Database(database, { readonly: true, fileMustExist: true });
    try {
      const { busy } = reader.prepare("SELECT COUNT(*) AS busy FROM tasks WHERE kind = 'worker' AND status = 'running'").get() as { busy: number };
      const { landed } = reader.prepare("SELECT COUNT(*) AS landed FROM events WHERE type = 'merge.landed'").get() as { landed: number };
      return { busy, landed };
    } finally {
      reader.close();
    }
  } catch {
    return { busy: 0, landed: 0 };
  }
}

function attempts(database: string): Map<string, number> {
  const reader = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const rows = reader.prepare('SELECT id, attempt FROM tasks').all() as { id: string; attempt: number }[];
    return new Map(rows.map((row) => [row.id, row.attempt]));
  } finally {
    reader.close();
  }
}

async function runColony(goal: string, repo: string, model: string, stopWhenBusy: boolean): Promise<RunFigures> {
  const database = join(repo, '.colony', 'colony.db');
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, 'run', goal, '--repo', repo, '--model', model, '--workers', String(WORKERS), '--json', '--planner-max-steps', '4000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  let peakKb = 0;
  let stopAt: { at: number; busy: number; attempts: Map<string, number> } | null = null;
  const sampler = setInterval(() => {
    if (child.pid !== undefined) peakKb = Math.max(peakKb, statusKb(child.pid, 'VmHWM') ?? 0);
    if (!stopWhenBusy || stopAt !== null) return;
    const { busy, landed } = progress(database);
    if (busy < BUSY_BEFORE_STOP && landed < LANDED_BEFORE_STOP) return;
    stopAt = { at: Date.now(), busy, attempts: attempts(database) };
    child.kill('SIGTERM');
  }, 500);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
  const ended = Date.now();
  clearInterval(sampler);
  let outcome: RunFigures['outcome'];
  try {
    outcome = JSON.parse(stdout) as RunFigures['outcome'];
  } catch {
    outcome = null;
  }
  return { code, wallMs: ended - started, peakRssMb: peakKb / 1024, outcome, stop: stopAt === null ? null : stopFigures(database, stopAt, ended) };
}

/** What the event log says of the stop: claims after the signal, and how far each task's attempt count moved. */
function stopFigures(database: string, stop: { at: number; busy: number; attempts: Map<string, number> }, ended: number): StopFigures {
  const reader = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const claims = reader.prepare("SELECT ts FROM events WHERE type = 'task.claimed' ORDER BY seq").all() as { ts: number }[];
    const after = claims.filter((claim) => claim.ts > stop.at);
    const before = claims.filter((claim) => claim.ts <= stop.at).at(-1);
    const now = new Map((reader.prepare('SELECT id, attempt FROM tasks').all() as { id: string; attempt: number }[]).map((row) => [row.id, row.attempt]));
    const grew = [...now.entries()].filter(([id, attempt]) => attempt - (stop.attempts.get(id) ?? 0) > 1).length;
    return {
      signalledAt: stop.at,
      busyWorkers: stop.busy,
      stoppedAfterMs: ended - stop.at,
      claimsAfter: after.length,
      lastClaimBeforeMs: before === undefined ? null : stop.at - before.ts,
      grewByMoreThanOne: grew,
      tasksAtStop: stop.attempts.size,
    };
  } finally {
    reader.close();
  }
}

/** The goal of three windows built to done: wall time and peak memory. */
export function benchLargeGoal(): Promise<BenchRow[]> {
  return benchLargeGoalRuns([false]);
}

/** The same goal, sent SIGTERM while its workers are busy: how the stop went. */
export function benchLargeGoalStop(): Promise<BenchRow[]> {
  return benchLargeGoalRuns([true]);
}

async function benchLargeGoalRuns(stops: readonly boolean[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const stop of stops) {
    const dir = mkdtempSync(join(tmpdir(), 'colony-bench-large-goal-'));
    // Agents' commands run as other users, who must get through to the repository.
    chmodSync(dir, 0o711);
    try {
      const { repo, goal, tokens, bytes } = await largeGoal(dir);
      const window = Math.floor(tokens / 3);
      const model = `sim?seed=8&latency=1000..3000&context=${window}`;
      process.stdout.write(`  ${MODULES} modules, ${(bytes / 1024).toFixed(0)} KB (${tokens} tokens), window ${window} tokens, --workers ${WORKERS}${stop ? ', SIGTERM when busy' : ''}…\n`);
      const figures = await runColony(goal, repo, model, stop);
      const setting = `${MODULES} modules, ${(bytes / 1024).toFixed(0)} KB goal (about ${tokens} tokens, three times the window), ${model}, --workers ${WORKERS}`;
      if (!stop) {
        const outcome = `exit ${figures.code}, status ${figures.outcome?.status ?? 'unknown'}, check ${figures.outcome?.check?.passed === true ? 'passed' : 'FAILED'}`;
        rows.push({ name: 'goal of three windows: wall time', value: figures.wallMs / 1000, unit: 's', target: 'ends done, check passed', note: `${setting}; ${outcome}` });
        rows.push({ name: 'goal of three windows: peak resident memory of colony', value: figures.peakRssMb, unit: 'MB', target: '< 1,024 MB', note: 'VmHWM of the colony run process' });
        continue;
      }
      const figuresOfStop = figures.stop;
      if (figuresOfStop === null) {
        rows.push({ name: 'goal of three windows, SIGTERM: stopped', value: 0, unit: '', note: `ended before ${BUSY_BEFORE_STOP} workers were busy or ${LANDED_BEFORE_STOP} modules landed; exit ${figures.code}` });
        continue;
      }
      rows.push({
        name: 'goal of three windows, SIGTERM: time to end stopped',
        value: figuresOfStop.stoppedAfterMs / 1000,
        unit: 's',
        note: `${setting}; SIGTERM with ${figuresOfStop.busyWorkers} workers running; exit ${figures.code}, status ${figures.outcome?.status ?? 'unknown'}`,
      });
      rows.push({ name: 'goal of three windows, SIGTERM: tasks claimed after the signal', value: figuresOfStop.claimsAfter, unit: 'claims', target: '0', note: `the last claim before it ${figuresOfStop.lastClaimBeforeMs ?? '-'} ms earlier` });
      rows.push({ name: 'goal of three windows, SIGTERM: tasks whose attempt count grew by more than one', value: figuresOfStop.grewByMoreThanOne, unit: 'tasks', target: '0', note: `of ${figuresOfStop.tasksAtStop} tasks at the signal` });
    } finally {
      // A stopped run keeps its workers' workspaces for `colony resume`: overlay mounts among them.
      unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
