import type { PostgresSchemaPart } from './postgres-migrations.js';

/**
 * The event log's table in PostgreSQL, as in SQLite: `seq` is the primary key and every other
 * index ends in it, so a filtered read comes back in seq order. `seq` is no sequence: the
 * writer numbers each batch from the table's highest seq while it holds the log's advisory lock
 * (see `postgres-event-store.ts`), so seqs are given in commit order and without gaps. `data`
 * is the payload as JSON text (not jsonb, which refuses the `\u0000` a payload may hold).
 */
export const POSTGRES_EVENT_LOG_SCHEMA: PostgresSchemaPart = {
  name: 'events',
  migrations: [
    `CREATE TABLE events (
       seq BIGINT PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       v INTEGER NOT NULL,
       run_id TEXT NOT NULL,
       agent_id TEXT NOT NULL,
       type TEXT NOT NULL,
       ts BIGINT NOT NULL,
       data TEXT NOT NULL
     );
     CREATE INDEX events_by_run ON events (run_id, seq);
     CREATE INDEX events_by_agent ON events (agent_id, seq);
     CREATE INDEX events_by_type ON events (type, seq);
     CREATE INDEX events_by_ts ON events (ts);`,
  ],
};

/**
 * The task table, the planners' inboxes, the user's andons on runs and people's requests, in
 * their SQLite shape (see `TASK_TABLE_SCHEMA` there for what each column means), in one script:
 * PostgreSQL stores start at this shape. `tasks.seq` is an identity, the creation order claims
 * follow. The inbox, the run andons and the requests are read from a seq on by other processes
 * (`personMessages`, `runAndonChanges`, `runRequests`), so their seqs are given in commit order
 * like the log's: under an advisory lock per table, from its highest seq. `tasks_claimable`
 * holds only open and running tasks, in seq order per run, so a claim walks it from the oldest
 * and stops at the first task of its kinds it can take, however many tasks are closed.
 * The unique index on `inbox.from_task_id` keeps each handoff to one delivery (NULLs, a
 * person's messages, are distinct).
 */
export const POSTGRES_TASK_TABLE_SCHEMA: PostgresSchemaPart = {
  name: 'tasks',
  migrations: [
    `CREATE TABLE tasks (
       seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       run_id TEXT NOT NULL,
       parent_task_id TEXT,
       created_by TEXT,
       kind TEXT NOT NULL CHECK (kind IN ('worker', 'planner')),
       title TEXT NOT NULL,
       body TEXT NOT NULL,
       scope TEXT,
       retry_of TEXT,
       paths TEXT NOT NULL DEFAULT '[]',
       acceptance TEXT NOT NULL DEFAULT '[]',
       status TEXT NOT NULL CHECK (status IN ('open', 'running', 'done', 'partial', 'blocked', 'failed')),
       attempt INTEGER NOT NULL CHECK (attempt >= 0),
       lease_holder TEXT,
       lease_expires_at BIGINT,
       created_at BIGINT NOT NULL,
       closed_at BIGINT,
       handoff TEXT,
       paused BOOLEAN NOT NULL DEFAULT false,
       andon_changed_at BIGINT,
       paused_ancestors INTEGER NOT NULL DEFAULT 0 CHECK (paused_ancestors >= 0),
       CHECK (CASE status
                WHEN 'open' THEN lease_holder IS NULL AND lease_expires_at IS NULL
                WHEN 'running' THEN lease_holder IS NOT NULL AND lease_expires_at IS NOT NULL
                ELSE lease_expires_at IS NULL
              END),
       CHECK ((status IN ('open', 'running')) = (closed_at IS NULL AND handoff IS NULL))
     );
     CREATE INDEX tasks_claimable ON tasks (run_id, paused_ancestors, seq) WHERE status IN ('open', 'running');
     CREATE INDEX tasks_by_run ON tasks (run_id, seq);
     CREATE INDEX tasks_by_parent ON tasks (parent_task_id, seq);
     CREATE INDEX tasks_running_by_holder ON tasks (lease_holder) WHERE status = 'running';
     CREATE INDEX tasks_paused ON tasks (run_id, seq) WHERE paused;
     CREATE TABLE inbox (
       seq BIGINT PRIMARY KEY,
       run_id TEXT NOT NULL,
       recipient_task_id TEXT NOT NULL,
       from_task_id TEXT,
       handoff TEXT,
       text TEXT,
       created_at BIGINT NOT NULL,
       taken BOOLEAN NOT NULL DEFAULT false,
       sender TEXT CHECK (sender IN ('person', 'colony')),
       CHECK ((from_task_id IS NULL) = (handoff IS NULL)),
       CHECK ((handoff IS NULL) != (text IS NULL))
     );
     CREATE UNIQUE INDEX inbox_one_handoff_per_task ON inbox (from_task_id);
     CREATE INDEX inbox_by_recipient ON inbox (recipient_task_id, taken, seq);
     CREATE INDEX inbox_handoffs_by_run ON inbox (run_id, seq) WHERE from_task_id IS NOT NULL;
     CREATE INDEX inbox_person_messages_by_run ON inbox (run_id, seq) WHERE from_task_id IS NULL;
     CREATE TABLE run_andons (
       seq BIGINT PRIMARY KEY,
       run_id TEXT NOT NULL,
       paused BOOLEAN NOT NULL,
       reason TEXT NOT NULL,
       changed_at BIGINT NOT NULL
     );
     CREATE INDEX run_andons_by_run ON run_andons (run_id, seq);
     CREATE TABLE run_requests (
       seq BIGINT PRIMARY KEY,
       run_id TEXT NOT NULL,
       kind TEXT NOT NULL CHECK (kind IN ('workers', 'stop', 'green')),
       task_id TEXT,
       workers INTEGER,
       reason TEXT NOT NULL,
       requested_at BIGINT NOT NULL,
       CHECK (CASE kind
                WHEN 'workers' THEN workers IS NOT NULL AND workers > 0 AND task_id IS NULL
                WHEN 'stop' THEN task_id IS NOT NULL AND workers IS NULL
                ELSE task_id IS NULL AND workers IS NULL
              END)
     );
     CREATE INDEX run_requests_by_run ON run_requests (run_id, seq);`,
  ],
};
