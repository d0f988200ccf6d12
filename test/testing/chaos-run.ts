import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { runIdentities } from '../../src/orchestrator/setup/command-sandbox.js';
import { createExampleRepository, type ExampleRepository } from './example-repository.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));

/**
 * The moments a kill aims for, by the newest event in the log when it lands: a model call in
 * flight, a command running, a merge between its recorded intent and main's move, a
 * handoff between its submission and its delivery, a planner publishing, anywhere at all.
 */
export const KILL_PHASES = ['model.requested', 'tool.started:run_command', 'merge.intended', 'handoff.submitted', 'task.created', 'tool.started:write_file', 'any'] as const;
export type KillPhase = (typeof KILL_PHASES)[number];

export interface ChaosOptions {
  readonly example: string;
  readonly model: string;
  readonly workers: number;
  /** How many times the harness is SIGKILLed before it is let finish. */
  readonly kills: number;
  /** Picks the moments; the same seed aims the same way. */
  readonly seed: number;
  /** The longest a cycle waits for its phase before it kills wherever the run is: a phase the run has left behind (the planner published everything) must not let it finish. */
  readonly phaseTimeoutMs?: number;
  /** Extra `colony run` flags. */
  readonly runFlags?: readonly string[];
  /** The longest the last, unkilled resume may take. */
  readonly finishTimeoutMs?: number;
}

export interface Kill {
  readonly phase: KillPhase;
  /** The newest event when the kill landed, as `type` or `type:tool`. */
  readonly landedAfter: string;
  readonly seq: number;
  /** Processes and cgroups of the run found alive after the kill, once the grace period passed. */
  readonly leftovers: readonly string[];
}

export interface ChaosOutcome {
  readonly repo: ExampleRepository;
  readonly stateDir: string;
  readonly runId: string;
  readonly kills: readonly Kill[];
  /** The last process's exit code and what it printed. */
  readonly exitCode: number | null;
  readonly output: string;
  readonly durationMs: number;
  /** Processes and cgroups of the run found alive after it ended. */
  readonly leftoversAtEnd: readonly string[];
}

/**
 * Runs `colony run` on an example as a separate process, SIGKILLs it `kills` times at chosen
 * moments (each a `colony resume` after the first), then resumes it once more and lets it end.
 */
export async function runWithKills(options: ChaosOptions): Promise<ChaosOutcome> {
  const started = Date.now();
  const repo = createExampleRepository(options.example);
  const stateDir = defaultStateDir(repo.dir);
  const random = seeded(options.seed);
  const kills: Kill[] = [];
  let runId = '';
  for (let cycle = 0; kills.length < options.kills; cycle += 1) {
    if (cycle > options.kills * 3) throw new Error(`only ${kills.length} of ${options.kills} kills landed in ${cycle} cycles: the run ends too soon for this example`);
    const phase = KILL_PHASES[Math.floor(random() * KILL_PHASES.length)] ?? 'any';
    const child = startColony(repo, options, cycle === 0);
    const landed = await killAt(child, stateDir, phase, random, options.phaseTimeoutMs ?? 3_000);
    if (landed === null) {
      // The run ended on its own before the kill: nothing left to kill.
      const code = await exited(child.process);
      return finishOutcome(repo, stateDir, runIdOf(stateDir), kills, code, child.output(), started);
    }
    runId = runIdOf(stateDir);
    kills.push({ phase, landedAfter: landed.label, seq: landed.seq, leftovers: await leftoversOf(runId) });
  }
  const last = startColony(repo, options, false);
  const timer = setTimeout(() => last.process.kill('SIGKILL'), options.finishTimeoutMs ?? 300_000);
  const code = await exited(last.process);
  clearTimeout(timer);
  return finishOutcome(repo, stateDir, runId || runIdOf(stateDir), kills, code, last.output(), started);
}

async function finishOutcome(
  repo: ExampleRepository,
  stateDir: string,
  runId: string,
  kills: readonly Kill[],
  exitCode: number | null,
  output: string,
  started: number,
): Promise<ChaosOutcome> {
  return { repo, stateDir, runId, kills, exitCode, output, durationMs: Date.now() - started, leftoversAtEnd: await leftoversOf(runId) };
}

interface Started {
  readonly process: ReturnType<typeof spawn>;
  readonly output: () => string;
}

function startColony(repo: ExampleRepository, options: ChaosOptions, first: boolean): Started {
  const args = first
    ? ['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', options.model, '--workers', String(options.workers), '--quiet', ...(options.runFlags ?? [])]
    : ['resume', '--repo', repo.dir, '--quiet'];
  const child = spawn(process.execPath, [COLONY, ...args], { cwd: repo.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' } });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { process: child, output: () => output };
}

function exited(child: ReturnType<typeof spawn>): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * Watches the log and kills the process when its newest event matches the phase (or, past the
 * timeout, wherever it is). Null when the process ended first.
 */
async function killAt(
  child: Started,
  stateDir: string,
  phase: KillPhase,
  random: () => number,
  timeoutMs: number,
): Promise<{ label: string; seq: number } | null> {
  const database = join(stateDir, 'colony.db');
  // The settling time and the timeout count from this process's first event, not from its
  // start: on a loaded machine a resume may take seconds to open the log, and a kill timed from
  // the start would land on its first event every cycle, in the same place each time.
  let begun: number | null = null;
  let reader: Database.Database | null = null;
  let afterSeq = -1;
  // Some progress first: a kill before the run has done anything proves little.
  const settleMs = 200 + Math.floor(random() * 1_200);
  try {
    for (;;) {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return null;
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (reader === null) {
        if (!existsSync(database)) continue;
        try {
          reader = new Database(database, { readonly: true, fileMustExist: true });
        } catch {
          continue;
        }
      }
      let rows: { seq: number; type: string; data: string }[];
      try {
        rows = reader.prepare('SELECT seq, type, data FROM events WHERE seq > ? ORDER BY seq').all(afterSeq) as typeof rows;
      } catch {
        continue;
      }
      if (afterSeq === -1) {
        // Only what this process records counts.
        afterSeq = rows.at(-1)?.seq ?? 0;
        continue;
      }
      const newest = rows.at(-1);
      if (newest === undefined) continue;
      afterSeq = newest.seq;
      begun ??= Date.now();
      const label = labelOf(newest);
      const waited = Date.now() - begun;
      const due = waited >= settleMs && (phase === 'any' || label === phase || rows.some((row) => labelOf(row) === phase));
      if (due || waited >= timeoutMs) {
        child.process.kill('SIGKILL');
        await exited(child.process);
        return { label, seq: newest.seq };
      }
    }
  } finally {
    reader?.close();
  }
}

function labelOf(row: { type: string; data: string }): string {
  if (row.type !== 'tool.started') return row.type;
  const data = JSON.parse(row.data) as { name?: string };
  return `tool.started:${data.name ?? ''}`;
}

function runIdOf(stateDir: string): string {
  const reader = new Database(join(stateDir, 'colony.db'), { readonly: true, fileMustExist: true });
  try {
    const row = reader.prepare("SELECT run_id AS runId FROM events WHERE type = 'run.started' ORDER BY seq DESC LIMIT 1").get() as { runId: string } | undefined;
    return row?.runId ?? '';
  } finally {
    reader.close();
  }
}

/**
 * What of the run is still alive a moment after its process died: processes running as one of
 * the run's sandbox uids, and `colony-<run>` cgroups holding a process. Empty cgroups are left
 * to the next opening's sweep and to the run's own close; they hold nothing.
 */
export async function leftoversOf(runId: string): Promise<string[]> {
  if (runId === '') return [];
  const { uidBase } = runIdentities(runId);
  let found: string[] = [];
  // bubblewrap's --die-with-parent and the kernel take a moment to reap.
  for (let attempt = 0; attempt < 40; attempt += 1) {
    found = [...processesOfUids(uidBase, uidBase + 1_000), ...busyCgroups(runId)];
    if (found.length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return found;
}

function processesOfUids(from: number, to: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
      if (uid >= from && uid < to) found.push(`process ${entry} (uid ${uid}): ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`);
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/** `colony-<run>` cgroup directories anywhere under /sys/fs/cgroup. */
export function runCgroups(runId: string): string[] {
  const name = `colony-${runId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}`;
  try {
    const listed = execFileSync('find', ['/sys/fs/cgroup', '-maxdepth', '4', '-type', 'd', '-name', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return listed.split('\n').filter((line) => line !== '');
  } catch (error) {
    // find exits 1 when some directories were unreadable; what it printed still counts.
    const stdout = (error as { stdout?: string }).stdout ?? '';
    return stdout.split('\n').filter((line) => line !== '');
  }
}

function busyCgroups(runId: string): string[] {
  const busy: string[] = [];
  for (const directory of runCgroups(runId)) {
    let files: string[];
    try {
      files = execFileSync('find', [directory, '-name', 'cgroup.procs'], { encoding: 'utf8' }).split('\n').filter((line) => line !== '');
    } catch {
      continue;
    }
    for (const file of files) {
      try {
        if (readFileSync(file, 'utf8').trim() !== '') busy.push(`cgroup ${file} holds processes`);
      } catch {
        // Gone while we looked.
      }
    }
  }
  return busy;
}

/** A small deterministic generator (mulberry32), so a seed aims the kills the same way. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
