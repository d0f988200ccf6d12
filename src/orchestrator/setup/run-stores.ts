import { existsSync } from 'node:fs';
import { createSecretRedactor } from '../../events/secret-redaction.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createRedactingEventStore } from '../../store/events/redacting-event-store.js';
import { createRedactingTaskStore } from '../../store/tasks/redacting-task-store.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../store/sqlite/sqlite-task-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { describeUnfinishedRun, findUnfinishedRun, type UnfinishedRun } from './run-history.js';
import { eventsDatabasePath } from './state-directory.js';
import { errorMessage } from '../../errors/error-message.js';
import { shellWord } from '../../errors/shell-word.js';

/** The unfinished run in a state directory's log, without creating a log where there is none. */
export async function readUnfinishedIn(stateDir: string): Promise<{ readonly ok: true; readonly run: UnfinishedRun | null } | { readonly ok: false; readonly error: string }> {
  if (!existsSync(eventsDatabasePath(stateDir))) return { ok: true, run: null };
  const stores = await openRunStores(stateDir, []);
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

/** Opens the state directory's event log and task table, each behind the redactor. */
export async function openRunStores(stateDir: string, secrets: readonly string[], durable = true): Promise<RunStores | { readonly ok: false; readonly error: string }> {
  let events: EventStore;
  try {
    events = createRedactingEventStore(openSqliteEventStore(eventsDatabasePath(stateDir), { durable }), createSecretRedactor(secrets));
  } catch (error) {
    return { ok: false, error: `cannot open the event log: ${errorMessage(error)}` };
  }
  let tasks: TaskStore;
  try {
    tasks = createRedactingTaskStore(openSqliteTaskStore(eventsDatabasePath(stateDir), { durable }), createSecretRedactor(secrets));
  } catch (error) {
    await events.close();
    return { ok: false, error: `cannot open the task store: ${errorMessage(error)}` };
  }
  // A forced quit (process.exit) still writes the events recorded in its last moments: the
  // SQLite store writes them before its promise settles. An exit handler cannot wait for it,
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
export function unfinishedRunError(run: UnfinishedRun, stateDir: string, stateGiven: boolean): string {
  const where = stateGiven ? ` --state ${shellWord(stateDir)}` : '';
  return (
    `${stateDir} holds an unfinished run, ${describeUnfinishedRun(run)}. ` +
    `Continue it with \`colony resume${where}\` (add --repo if you passed one), or start over with \`colony run GOAL${where} --new\`: ` +
    'the unfinished run is then recorded as abandoned; what it landed stays on main and its workspaces are swept, their work saved on branches.'
  );
}

/** Records that the unfinished run will not be resumed: `colony run --new` started over. */
export async function abandonRun(events: EventStore, run: UnfinishedRun): Promise<void> {
  events.append({ type: 'run.ended', data: { status: 'abandoned', durationMs: Date.now() - run.startedAt }, runId: run.runId, agentId: 'system' });
  await events.flush();
}

