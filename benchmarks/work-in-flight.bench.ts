import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EventInput } from '../src/store/events/event-store.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { renderFilesInFlight } from '../src/orchestrator/roles/planner/files-in-flight-notice.js';
import { defaultPromptSet } from '../src/orchestrator/prompts/prompt-set.js';
import { createWorkInFlight } from '../src/orchestrator/in-flight/work-in-flight.js';
import { createWorkInFlightFold, WORK_IN_FLIGHT_EVENT_TYPES } from '../src/orchestrator/in-flight/work-in-flight-fold.js';
import { median, type BenchRow } from './bench-row.js';

/**
 * What planners' conflict avoidance costs the harness: folding the log's file activity (every
 * tool call of every worker is read once more, outputs and file contents included), and the
 * picture, notice and overlap check with hundreds of tasks in flight.
 */

const RUN = 'run-bench';
const TASKS = 500;
/** Tool calls per worker: reads, writes, edits and commands, as a sim worker makes them. */
const CALLS_PER_WORKER = 40;
const FILE_BYTES = 2_000;
const OUTPUT_BYTES = 4_000;
const ROUNDS = 50;

function workerEvents(index: number): EventInput[] {
  const agentId = `worker-${index}`;
  const taskId = `task-${index}`;
  const module = `src/area-${index % 20}/module-${index}.js`;
  const inputs: EventInput[] = [
    { type: 'workspace.created', data: { path: `/state/workspaces/${agentId}`, branch: agentId, baseCommit: 'b'.repeat(40), durationMs: 5 }, runId: RUN, agentId },
    { type: 'agent.started', data: { role: 'worker', taskId, title: `Build ${module}`, model: 'sim', systemPrompt: 'p', task: 't', tools: [] }, runId: RUN, agentId },
  ];
  for (let call = 0; call < CALLS_PER_WORKER; call += 1) {
    const callId = `c${call}`;
    const kind = call % 4;
    const name = kind === 0 ? 'write_file' : kind === 1 ? 'edit_file' : kind === 2 ? 'read_file' : 'run_command';
    const path = kind === 1 ? 'src/index.js' : module.replace('.js', `-${call}.js`);
    const input = kind === 3 ? JSON.stringify({ command: 'node --test' }) : JSON.stringify({ path, content: 'x'.repeat(FILE_BYTES) });
    inputs.push({ type: 'tool.started', data: { step: call, callId, name, input }, runId: RUN, agentId });
    inputs.push({ type: 'tool.ended', data: { step: call, callId, name, ok: true, output: 'y'.repeat(kind === 3 ? OUTPUT_BYTES : 100), durationMs: 1 }, runId: RUN, agentId });
  }
  return inputs;
}

export async function benchWorkInFlight(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-files-'));
  const store = openSqliteEventStore(join(dir, 'colony.db'));
  try {
    const tasks: EventInput[] = Array.from({ length: TASKS }, (_, index) => ({
      type: 'task.created',
      data: { taskId: `task-${index}`, parentTaskId: 'root', kind: 'worker', title: `Build module ${index}`, scope: null, retryOf: null, paths: [`src/area-${index % 20}/module-${index}.js`, 'src/index.js'] },
      runId: RUN,
      agentId: 'planner',
    }));
    store.appendMany(tasks);
    const workers = Array.from({ length: TASKS }, (_, index) => workerEvents(index)).flat();
    store.appendMany(workers);
    await store.flush();
    const events = await store.lastSeq();

    // The two halves of a first fold, apart: reading the events back, then folding them.
    const readStarted = performance.now();
    const folded = await store.read({ runId: RUN, types: WORK_IN_FLIGHT_EVENT_TYPES });
    const readMs = performance.now() - readStarted;
    const fold = createWorkInFlightFold(RUN);
    const foldStarted = performance.now();
    for (const event of folded) fold.add(event);
    const foldMs = performance.now() - foldStarted;

    const work = createWorkInFlight(store, RUN);
    await work.picture();

    const template = defaultPromptSet().text('files-in-flight');
    const pictureMs: number[] = [];
    const overlapMs: number[] = [];
    let noticeChars = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const started = performance.now();
      noticeChars = (renderFilesInFlight(await work.picture(), 'root', template) ?? '').length;
      pictureMs.push(performance.now() - started);
      const checked = performance.now();
      await work.overlapsWith([`src/area-${round % 20}/`, 'src/index.js'], 'root');
      overlapMs.push(performance.now() - checked);
    }
    const how = `${TASKS} worker tasks in flight, ${CALLS_PER_WORKER} tool calls each (${events.toLocaleString('en-US')} events, SQLite)`;
    return [
      { name: 'reading the log back for the fold, per 1,000 events', value: (readMs / events) * 1_000, unit: 'ms', note: `${how}; each event is read once per run, by the first planner call after it` },
      { name: 'folding, per 1,000 events', value: (foldMs / events) * 1_000, unit: 'ms' },
      { name: 'picture and notice, nothing new', value: median(pictureMs), unit: 'ms', target: '< 50 ms', note: `median of ${ROUNDS}; before every planner model call; notice ${noticeChars} characters` },
      { name: 'create_task overlap check', value: median(overlapMs), unit: 'ms', target: '< 50 ms', note: `median of ${ROUNDS}; a folder and src/index.js against ${TASKS} tasks` },
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
