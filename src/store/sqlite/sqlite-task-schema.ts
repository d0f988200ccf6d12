import type { SchemaPart } from './sqlite-migrations.js';

/**
 * The task table and the planners' inboxes, a part of its own so it can share a file with the
 * event log and migrate apart from it.
 *
 * `tasks.seq` (the rowid) is the creation order claims follow. `paused_ancestors` counts the
 * task's ancestors whose andon is paused, kept up to date by `setAndon` (which walks the
 * subtree, rarely) and `createTask` (the parent's count, plus one when the parent itself is
 * paused), so a claim never walks ancestors. `tasks_claimable` is keyed by (run_id, status,
 * kind, paused_ancestors) and, like every SQLite index, ends in the rowid: the oldest open task
 * of a kind that nothing pauses is one index seek, however many tasks the run has.
 *
 * `handoff` is the handoff as JSON, set exactly when the task is closed; a closed task keeps
 * its last `lease_holder` (the runner that closed it) and has no lease expiry.
 *
 * The inbox's unique index on `from_task_id` makes a second delivery of one task's handoff
 * impossible whatever the code does (a person's message has no sender task, and SQLite lets
 * any number of NULLs through a unique index). Inbox rows are never deleted, so `seq` only
 * grows; `taken` marks a message already handed to the planner.
 *
 * `paths` (added by the second script) holds the files and folders a task's planner declared
 * it would change, as a JSON array of strings; tasks from before it read as declaring none.
 *
 * `run_holds` (added by the third script) is the user's hold on whole runs, one row per change,
 * never updated or deleted: a run is held while its latest row says so. Being rows of their own
 * (and not a task's `paused`), no planner's andon can lift it, and the log can record every
 * change once by its `seq`. The third script also indexes people's messages by run, which is
 * how a run finds the messages sent to its planners from another process.
 *
 * `acceptance` (the fourth script) holds the commands that must pass on main once the
 * task's work landed, as a JSON array of strings; tasks from before it have none.
 *
 * `run_requests` (the fifth script) holds what people asked of a running run besides messages
 * and the hold, one row per request, never updated or deleted: a new worker limit (`kind`
 * 'workers', with `workers`) or a stop of the agent on a task (`kind` 'stop', with `task_id`).
 * Like `run_holds`, rows are numbered in commit order, so the log records each once by `seq`.
 *
 * The inbox's `sender` (the sixth script) says who left a message that is not a handoff:
 * 'person' or 'colony' (a fix-up from the green loop); null for a handoff, and for a person's
 * message left before colony wrote its own, which reads as a person's.
 *
 * The seventh script makes `run_requests` again (SQLite cannot change a table's checks) so it
 * takes a third kind, 'green' (a snapshot of main now), with neither `task_id` nor `workers`;
 * its rows and their `seq` are copied over as they were.
 */
export const TASK_TABLE_SCHEMA: SchemaPart = {
  name: 'tasks',
  migrations: [
    `CREATE TABLE tasks (
       seq INTEGER PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       run_id TEXT NOT NULL,
       parent_task_id TEXT,
       created_by TEXT,
       kind TEXT NOT NULL CHECK (kind IN ('worker', 'planner')),
       title TEXT NOT NULL,
       body TEXT NOT NULL,
       scope TEXT,
       retry_of TEXT,
       status TEXT NOT NULL CHECK (status IN ('open', 'running', 'done', 'partial', 'blocked', 'failed')),
       attempt INTEGER NOT NULL CHECK (attempt >= 0),
       lease_holder TEXT,
       lease_expires_at INTEGER,
       created_at INTEGER NOT NULL,
       closed_at INTEGER,
       handoff TEXT,
       paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
       andon_changed_at INTEGER,
       paused_ancestors INTEGER NOT NULL DEFAULT 0 CHECK (paused_ancestors >= 0),
       CHECK (CASE status
                WHEN 'open' THEN lease_holder IS NULL AND lease_expires_at IS NULL
                WHEN 'running' THEN lease_holder IS NOT NULL AND lease_expires_at IS NOT NULL
                ELSE lease_expires_at IS NULL
              END),
       CHECK ((status IN ('open', 'running')) = (closed_at IS NULL AND handoff IS NULL))
     ) STRICT;
     CREATE INDEX tasks_claimable ON tasks (run_id, status, kind, paused_ancestors);
     CREATE INDEX tasks_by_parent ON tasks (parent_task_id);
     CREATE INDEX tasks_paused ON tasks (run_id) WHERE paused = 1;
     CREATE INDEX tasks_running_by_holder ON tasks (lease_holder) WHERE status = 'running';

     CREATE TABLE inbox (
       seq INTEGER PRIMARY KEY,
       run_id TEXT NOT NULL,
       recipient_task_id TEXT NOT NULL,
       from_task_id TEXT,
       handoff TEXT,
       text TEXT,
       created_at INTEGER NOT NULL,
       taken INTEGER NOT NULL DEFAULT 0 CHECK (taken IN (0, 1)),
       CHECK ((from_task_id IS NULL) = (handoff IS NULL)),
       CHECK ((handoff IS NULL) != (text IS NULL))
     ) STRICT;
     CREATE UNIQUE INDEX inbox_one_handoff_per_task ON inbox (from_task_id);
     CREATE INDEX inbox_unread ON inbox (recipient_task_id) WHERE taken = 0;
     CREATE INDEX inbox_handoffs_by_run ON inbox (run_id) WHERE from_task_id IS NOT NULL;`,
    `ALTER TABLE tasks ADD COLUMN paths TEXT NOT NULL DEFAULT '[]';`,
    `CREATE TABLE run_holds (
       seq INTEGER PRIMARY KEY,
       run_id TEXT NOT NULL,
       held INTEGER NOT NULL CHECK (held IN (0, 1)),
       reason TEXT NOT NULL,
       changed_at INTEGER NOT NULL
     ) STRICT;
     CREATE INDEX run_holds_by_run ON run_holds (run_id);
     CREATE INDEX inbox_person_messages_by_run ON inbox (run_id) WHERE from_task_id IS NULL;`,
    `ALTER TABLE tasks ADD COLUMN acceptance TEXT NOT NULL DEFAULT '[]';`,
    `CREATE TABLE run_requests (
       seq INTEGER PRIMARY KEY,
       run_id TEXT NOT NULL,
       kind TEXT NOT NULL CHECK (kind IN ('workers', 'stop')),
       task_id TEXT,
       workers INTEGER,
       reason TEXT NOT NULL,
       requested_at INTEGER NOT NULL,
       CHECK (CASE kind
                WHEN 'workers' THEN workers IS NOT NULL AND workers > 0 AND task_id IS NULL
                ELSE task_id IS NOT NULL AND workers IS NULL
              END)
     ) STRICT;
     CREATE INDEX run_requests_by_run ON run_requests (run_id);`,
    // Who left a message that is not a handoff; null for a handoff, and for a person's message left before colony wrote its own.
    `ALTER TABLE inbox ADD COLUMN sender TEXT CHECK (sender IN ('person', 'colony'));`,
    // A green snapshot on request: a kind of its own, so the table is made again with a check that takes it.
    `CREATE TABLE run_requests_next (
       seq INTEGER PRIMARY KEY,
       run_id TEXT NOT NULL,
       kind TEXT NOT NULL CHECK (kind IN ('workers', 'stop', 'green')),
       task_id TEXT,
       workers INTEGER,
       reason TEXT NOT NULL,
       requested_at INTEGER NOT NULL,
       CHECK (CASE kind
                WHEN 'workers' THEN workers IS NOT NULL AND workers > 0 AND task_id IS NULL
                WHEN 'stop' THEN task_id IS NOT NULL AND workers IS NULL
                ELSE task_id IS NULL AND workers IS NULL
              END)
     ) STRICT;
     INSERT INTO run_requests_next (seq, run_id, kind, task_id, workers, reason, requested_at)
       SELECT seq, run_id, kind, task_id, workers, reason, requested_at FROM run_requests;
     DROP TABLE run_requests;
     ALTER TABLE run_requests_next RENAME TO run_requests;
     CREATE INDEX run_requests_by_run ON run_requests (run_id);`,
  ],
};
