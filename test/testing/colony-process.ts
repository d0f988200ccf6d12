import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { runCli, type CliRun } from './example-repository.js';

const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));

/** Runs `colony` as a process of its own, as a person in another terminal would, and waits for it to end. */
export function runColonyProcess(args: readonly string[], cwd: string): Promise<CliRun> {
  return startColonyProcess(args, cwd).ended;
}

/** Starts `colony` as a process of its own: the process, and what it printed once it has ended. */
export function startColonyProcess(args: readonly string[], cwd: string): { readonly child: ChildProcess; readonly ended: Promise<CliRun> } {
  const child = spawn(process.execPath, [COLONY, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<CliRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
  return { child, ended };
}

interface EventRow {
  seq: number;
  id: string;
  v: number;
  run_id: string;
  agent_id: string;
  type: string;
  ts: number;
  data: string;
}

/** Every event flushed to the log of a state directory so far, read through a read-only connection of its own. */
export function readLoggedEvents(stateDir: string): ColonyEvent[] {
  const path = join(stateDir, 'colony.db');
  if (!existsSync(path)) return [];
  const reader = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = reader.prepare('SELECT seq, id, v, run_id, agent_id, type, ts, data FROM events ORDER BY seq').all() as EventRow[];
    return rows.map((row) => ({ seq: row.seq, id: row.id, v: row.v, runId: row.run_id, agentId: row.agent_id, ts: row.ts, type: row.type, data: JSON.parse(row.data) }) as ColonyEvent);
  } catch {
    // The log is being created.
    return [];
  } finally {
    reader.close();
  }
}

/** The first logged event that `matches`, once it is there; fails after `timeoutMs`. */
export async function waitForLoggedEvent(stateDir: string, matches: (event: ColonyEvent) => boolean, timeoutMs = 30_000): Promise<ColonyEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = readLoggedEvents(stateDir).find(matches);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no matching event in ${stateDir} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `colony` in this process with `argv` and stops it, as Ctrl-C does, once `landings`
 * merges have landed in the log under `stateDir`.
 */
export async function runCliUntilLanded(argv: string[], stateDir: string, landings = 1): Promise<CliRun> {
  const stop = new AbortController();
  const database = join(stateDir, 'colony.db');
  const watcher = setInterval(() => {
    if (!existsSync(database)) return;
    const reader = new Database(database, { readonly: true, fileMustExist: true });
    try {
      const { landed } = reader.prepare("SELECT COUNT(*) AS landed FROM events WHERE type = 'merge.landed'").get() as { landed: number };
      if (landed >= landings) stop.abort();
    } catch {
      // The log is being created.
    } finally {
      reader.close();
    }
  }, 20);
  try {
    return await runCli(argv, { signal: stop.signal });
  } finally {
    clearInterval(watcher);
  }
}
