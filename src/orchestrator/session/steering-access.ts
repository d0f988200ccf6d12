import type { EventStore } from '../../store/events/event-store.js';
import { createAgentRecorder } from '../agent-recorder.js';
import { findUnfinishedRun, type UnfinishedRun } from '../setup/run-history.js';
import { openRunStores } from '../setup/run-stores.js';
import { COMMAND_STORE_PATIENCE_MS, acquireStoreLock, describeRunState, mayHoldRuns, type RunState, type StoreLock } from '../setup/run-state.js';
import { createSteeringRecorder } from '../steering/steering-record.js';
import type { SteeringStores } from '../steering/steering.js';

/** The unfinished run of a state directory, opened to be steered from a process that does not run it. */
export type SteeringAccess =
  | {
      readonly ok: true;
      readonly run: UnfinishedRun;
      readonly stores: SteeringStores;
      /**
       * True when another process holds the run lock (the state directory's, or the store's): the run is going, and
       * that process records what is done here and acts on it (within its polls). False when
       * no run goes: this process held the lock, recorded it itself, and the run acts on it
       * when it is resumed.
       */
      readonly live: boolean;
      /** Makes what was recorded durable, closes the stores and lets the lock go. */
      readonly close: () => Promise<void>;
    }
  | { readonly ok: false; readonly error: string };

/**
 * Opens the unfinished `colony run` of a run state (a state directory, or a PostgreSQL store) for `sendToPlanner`, `holdRun` and
 * `releaseRun` from another process (another terminal, a UI). The task store takes writers
 * from any process; the event log takes one, so the log is written here only while this
 * process holds the run lock, which it tries for without waiting. Refuses, saying what to do,
 * a state directory without a log, a log without a run, or one whose last run ended.
 */
export async function openSteering(state: RunState, secrets: readonly string[]): Promise<SteeringAccess> {
  const where = describeRunState(state);
  if (!mayHoldRuns(state)) {
    return { ok: false, error: `there is no run in ${where}: it holds no colony log. Pass the repository a run works on with --repo, or its state directory with --state; start a run with colony run GOAL.md.` };
  }
  const taken = await acquireStoreLock(state, COMMAND_STORE_PATIENCE_MS);
  const lock: StoreLock | null = taken.ok ? taken.lock : null;
  const opened = await openRunStores(state, secrets, true, COMMAND_STORE_PATIENCE_MS);
  if (!opened.ok) {
    await lock?.release();
    return opened;
  }
  const run = await findUnfinishedRun(opened.events);
  if (run === null) {
    const error = await noRunToSteer(opened.events, where);
    await opened.close();
    await lock?.release();
    return { ok: false, error };
  }
  const writer =
    lock === null
      ? undefined
      : createSteeringRecorder({ events: opened.events, tasks: opened.tasks, runId: run.runId, record: createAgentRecorder(opened.events, run.runId, 'system').record });
  return {
    ok: true,
    run,
    stores: { events: opened.events, tasks: opened.tasks, ...(writer === undefined ? {} : { writer }) },
    live: lock === null,
    close: async () => {
      try {
        await opened.events.flush();
      } finally {
        await opened.close();
        await lock?.release();
      }
    },
  };
}

/** Why there is no run to steer: none was recorded, or the last one ended. */
async function noRunToSteer(events: EventStore, where: string): Promise<string> {
  const runs = await events.read({ types: ['run.started', 'run.ended'] });
  const started = runs.findLast((event) => event.type === 'run.started' && event.data.mode === 'run');
  if (started === undefined) return `there is no colony run in ${where}. Start one with colony run GOAL.md.`;
  const ended = runs.findLast((event) => event.type === 'run.ended' && event.runId === started.runId);
  const how = ended?.type === 'run.ended' ? ` (${ended.data.status})` : '';
  return `the last run in ${where}, ${started.runId}, has ended${how}: there is no planner to tell and nothing to pause. colony status shows how it went; start a new run with colony run GOAL.md.`;
}
