import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { EVENT_VERSION } from '../src/events/event-types.js';
import { newId } from '../src/events/ids.js';
import { modelRespondedInput, toolEndedInput, toolStartedInput } from '../src/store/testing/event-store-fixtures.js';
import type { EventInput } from '../src/store/events/event-store.js';
import { createMemoryEventStore } from '../src/store/events/memory-event-store.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { median, type BenchRow } from './bench-row.js';

export interface EventAppendBenchOptions {
  /** Events written in each measured round. */
  readonly events?: number;
  /** Measured rounds; each figure is the median over them. */
  readonly rounds?: number;
}

const BATCH = 100;
const WARM_UP_EVENTS = 20_000;
const DISTINCT_INPUTS = 3_000;
const WORDS = ['const', 'value', 'return', 'export', 'function', 'import', 'await', 'store', 'event', 'if', '=>', '{', '}'];

/** A small deterministic generator, so every run writes the same log. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function text(random: () => number, bytes: number): string {
  let result = '';
  while (result.length < bytes) result += `${WORDS[Math.floor(random() * WORDS.length)] ?? ''} `;
  return result.slice(0, bytes);
}

/** What an agent step looks like in the log: a model response, then a tool call's start and end. */
function realisticInputs(count: number): EventInput[] {
  const random = seededRandom(7);
  const inputs: EventInput[] = [];
  for (let index = 0; inputs.length < count; index += 1) {
    const subject = { runId: 'run-bench', agentId: `agent-${index % 40}` };
    const step = Math.floor(index / 40);
    inputs.push(modelRespondedInput(subject, step, text(random, 160)));
    inputs.push(toolStartedInput(subject, step, `{"path":"src/${text(random, 24).trim().replace(/\W+/g, '-')}.ts"}`));
    inputs.push(toolEndedInput(subject, step, text(random, 200)));
  }
  return inputs.slice(0, count);
}

type RawRow = [number, string, number, string, string, string, number, string];

function rawRows(inputs: readonly EventInput[], count: number): RawRow[] {
  const serialised = inputs.map((input) => JSON.stringify(input.data));
  const start = Date.now();
  const rows: RawRow[] = [];
  for (let index = 0; index < count; index += 1) {
    const input = inputs[index % inputs.length];
    if (input === undefined) throw new Error('the bench needs at least one input');
    const ts = start + Math.floor(index / 50);
    rows.push([index + 1, newId(ts), EVENT_VERSION, input.runId, input.agentId, input.type, ts, serialised[index % inputs.length] ?? '']);
  }
  return rows;
}

/** Inserts pre-serialised rows into a log with colony's schema, the fastest this table can be written. */
async function insertRaw(path: string, rows: readonly RawRow[]): Promise<number> {
  await openSqliteEventStore(path).close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // The same durability as colony's log, so the comparison is of the work around the insert.
  db.pragma('synchronous = FULL');
  const insert = db.prepare('INSERT INTO events (seq, id, v, run_id, agent_id, type, ts, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const insertBatch = db.transaction((batch: readonly RawRow[]) => {
    for (const row of batch) insert.run(...row);
  });
  const started = performance.now();
  for (let offset = 0; offset < rows.length; offset += BATCH) insertBatch(rows.slice(offset, offset + BATCH));
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return rows.length / seconds;
}

async function appendToColony(path: string, inputs: readonly EventInput[], count: number): Promise<number> {
  const store = openSqliteEventStore(path);
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    store.append(inputs[index % inputs.length] as EventInput);
    if ((index + 1) % BATCH === 0) await store.flush();
  }
  await store.flush();
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return count / seconds;
}

async function appendToMemory(inputs: readonly EventInput[], count: number): Promise<number> {
  const store = createMemoryEventStore();
  const started = performance.now();
  for (let index = 0; index < count; index += 1) store.append(inputs[index % inputs.length] as EventInput);
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return count / seconds;
}

/**
 * How fast colony writes its event log, next to the fastest the same rows can go into the
 * same SQLite table, measured in one run on temp files.
 */
export async function benchEventAppend(options: EventAppendBenchOptions = {}): Promise<BenchRow[]> {
  const events = options.events ?? 200_000;
  const rounds = options.rounds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-events-'));
  try {
    const inputs = realisticInputs(DISTINCT_INPUTS);
    const rows = rawRows(inputs, events);
    await insertRaw(join(dir, 'warm-raw.db'), rows.slice(0, WARM_UP_EVENTS));
    await appendToColony(join(dir, 'warm-colony.db'), inputs, WARM_UP_EVENTS);
    await appendToMemory(inputs, WARM_UP_EVENTS);
    const raw: number[] = [];
    const colony: number[] = [];
    const memory: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      raw.push(await insertRaw(join(dir, `raw-${round}.db`), rows));
      colony.push(await appendToColony(join(dir, `colony-${round}.db`), inputs, events));
      memory.push(await appendToMemory(inputs, events));
      // Let the event loop turn between rounds, as it would between bursts of real work.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const rawRate = median(raw);
    const colonyRate = median(colony);
    const setting = `${events.toLocaleString('en')} events, median of ${rounds} rounds after a warm-up`;
    const mix = 'a mix of model.responded, tool.started and tool.ended with ~200-byte outputs';
    return [
      {
        name: 'event log: raw better-sqlite3 insert',
        value: Math.round(rawRate),
        unit: 'rows/s',
        note: `the same rows pre-serialised, ${BATCH} per transaction, WAL with synchronous=FULL, colony's schema and indexes; ${setting}`,
      },
      {
        name: `event log: colony SQLite append + flush every ${BATCH}`,
        value: Math.round(colonyRate),
        unit: 'events/s',
        target: '≥ 50,000 events/s',
        note: `validation, envelope and JSON serialisation included; ${mix}; ${setting}`,
      },
      {
        name: 'event log: colony share of raw insert speed',
        value: Math.round((colonyRate / rawRate) * 100),
        unit: '%',
      },
      {
        name: 'event log: colony memory store append',
        value: Math.round(median(memory)),
        unit: 'events/s',
        note: 'validation, envelope and JSON serialisation only: the cost colony adds before SQLite',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const script = process.argv[1];
if (script !== undefined && import.meta.url === pathToFileURL(script).href) {
  for (const row of await benchEventAppend()) console.log(row);
}
