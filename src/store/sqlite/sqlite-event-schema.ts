import type { SchemaPart } from './sqlite-migrations.js';

/**
 * The event log's tables. `seq` is the rowid, so reading in seq order and from a given seq on
 * is a walk of the table itself; the other indexes end in seq so a filtered read comes back
 * already in seq order. `data` is the payload as JSON text.
 */
export const EVENT_LOG_SCHEMA: SchemaPart = {
  name: 'events',
  migrations: [
    `CREATE TABLE events (
       seq INTEGER PRIMARY KEY,
       id TEXT NOT NULL UNIQUE,
       v INTEGER NOT NULL,
       run_id TEXT NOT NULL,
       agent_id TEXT NOT NULL,
       type TEXT NOT NULL,
       ts INTEGER NOT NULL,
       data TEXT NOT NULL
     ) STRICT;
     CREATE INDEX events_by_run ON events (run_id, seq);
     CREATE INDEX events_by_agent ON events (agent_id, seq);
     CREATE INDEX events_by_type ON events (type, seq);
     CREATE INDEX events_by_ts ON events (ts);`,
  ],
};
