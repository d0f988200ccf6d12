import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createRedactingEventStore } from '../../store/events/redacting-event-store.js';
import { createRedactingTaskStore } from '../../store/tasks/redacting-task-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { openPostgresStore } from '../../store/postgres/postgres-store.js';
import { describeUnfinishedRun, findUnfinishedRun, type UnfinishedRun } from './run-history.js';
import { describeRunState, mayHoldRuns, postgresOptionsOf, runStateSecrets, type RunState } from './run-state.js';
import { eventsDatabasePath } from './state-directory.js';
import { errorMessage } from '../../errors/error-message.js';
import { shellWord } from '../../errors/shell-word.js';

/** The unfinished run in a run state's log, without creating a log in a state directory where there is none. */
export async function readUnfinishedIn(state: RunState): Promise<{ readonly ok: true; readonly run: UnfinishedRun | null } | { readonly ok: false; readonly error: string }> {
  if (!mayHoldRuns(state)) return { ok: true, run: null };
  const stores = await openRunStores(state, []);
  if (!stores.ok) return stores;
  try {
    return { ok: true, run: await findUnfinishedRun(stores.events) };
  } finally {
    await stores.close();
  }
}

/** The run's two stores, secrets redacted; `close` closes both. */
export interface RunStores {
  readonly ok: true;
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly close: () => Promise<void>;
}

/**
 * Opens the run state's event log and task table (the state directory's SQLite file, or the
 * PostgreSQL store on one pool, which waits `retryMs` for a server that does not answer), each
 * behind the redactor, which also hides the store's password.
 */
export async function openRunStores(state: RunState, secrets: readonly string[], durable = true, retryMs?: number): Promise<RunStores | { readonly ok: false; readonly error: string }> {
  const redactor = createSecretRedactor([...secrets, ...runStateSecrets(state)]);
  let events: EventStore;
  let tasks: TaskStore;
  if (state.storeUrl !== undefined) {
    try {
      const store = await openPostgresStore(postgresOptionsOf(state.storeUrl, retryMs));
      events = createRedactingEventStore(store.events, redactor);
      tasks = createRedactingTaskStore(store.tasks, redactor);
    } catch (error) {
      // The store's messages name it (without its password) and say what to do.
      return { ok: false, error: redactor.redactText(errorMessage(error)) };
    }
  } else {
    try {
      events = createRedactingEventStore(openSqliteEventStore(eventsDatabasePath(state.stateDir), { durable }), redactor);
    } catch (error) {
      return { ok: false, error: `cannot open the event log: ${errorMessage(error)}` };
    }
    try {
      tasks = createRedactingTaskStore(openSqliteTaskStore(eventsDatabasePath(state.stateDir), { durable }), redactor);
    } catch (error) {
      await events.close();
      return { ok: false, error: `cannot open the task store: ${errorMessage(error)}` };
    }
  }
  // A forced quit (process.exit) still writes the events recorded in its last moments where
  // the store is SQLite, which writes them before its promise settles. An exit handler cannot wait for it,
  // so a failure there has nobody left to tell.
  const closeOnExit = (): void => {
    events.close().catch(() => undefined);
  };
  process.once('exit', closeOnExit);
  return {
    ok: true,
    events,
    tasks,
    close: async () => {
      process.off('exit', closeOnExit);
      await tasks.close();
      await events.close();
    },
  };
}

/** Why `colony run` refuses to start over an unfinished run, and the two ways on. */
export function unfinishedRunError(run: UnfinishedRun, state: RunState, stateGiven: boolean): string {
  const where = `${stateGiven ? ` --state ${shellWord(state.stateDir)}` : ''}${state.storeUrl === undefined ? '' : ' --store URL'}`;
  return (
    `${describeRunState(state)} holds an unfinished run, ${describeUnfinishedRun(run)}. ` +
    `Continue it with \`colony resume${where}\` (add --repo if you passed one), or start over with \`colony run GOAL${where} --new\`: ` +
    'the unfinished run is then recorded as abandoned; what it landed stays on main and its workspaces are swept, their work saved on branches.'
  );
}

/** Records that the unfinished run will not be resumed: `colony run --new` started over. */
export async function abandonRun(events: EventStore, run: UnfinishedRun): Promise<void> {
  events.append({ type: 'run.ended', data: { status: 'abandoned', durationMs: Date.now() - run.startedAt }, runId: run.runId, agentId: 'system' });
  await events.flush();
}

