import type Database from 'better-sqlite3';

/**
 * The schema of one part of a colony store (the event log, the task table and inboxes),
 * as the ordered list of SQL scripts that build it. Script N moves the part from version N to
 * N + 1; a released script is never edited, only followed by a new one.
 */
export interface SchemaPart {
  readonly name: string;
  readonly migrations: readonly string[];
}

const VERSIONS_TABLE = 'schema_versions';

function tableExists(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function storedVersion(db: Database.Database, name: string): number | undefined {
  if (!tableExists(db, VERSIONS_TABLE)) return undefined;
  const row = db.prepare(`SELECT version FROM ${VERSIONS_TABLE} WHERE part = ?`).get(name) as
    | { version: number }
    | undefined;
  return row?.version ?? 0;
}

/**
 * Brings `part` up to its latest version in one transaction. Each part keeps its own version
 * in a small table, rather than in `PRAGMA user_version`, so several parts can share one file
 * and migrate independently.
 *
 * Throws when the file belongs to something else (tables but no version table) or was written
 * by a newer colony, because writing into either would damage it.
 */
export function migrateSchemaPart(db: Database.Database, path: string, part: SchemaPart): void {
  const latest = part.migrations.length;
  // Most opens find the schema current: check without taking the write lock first.
  if (storedVersion(db, part.name) === latest) return;
  db.transaction(() => {
    let current = storedVersion(db, part.name);
    if (current === undefined) {
      const other = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' LIMIT 1")
        .get() as { name: string } | undefined;
      if (other !== undefined) {
        throw new Error(
          `${path} is a SQLite database that colony did not create (it has a table "${other.name}" ` +
            `and no ${VERSIONS_TABLE} table). Point colony at a new file, or at a store it created.`,
        );
      }
      db.exec(`CREATE TABLE ${VERSIONS_TABLE} (part TEXT PRIMARY KEY, version INTEGER NOT NULL) STRICT`);
      current = 0;
    }
    if (current > latest) {
      throw new Error(
        `${path} holds the ${part.name} schema at version ${current}, newer than the version ${latest} ` +
          `this colony knows. Upgrade colony to open it.`,
      );
    }
    for (const script of part.migrations.slice(current)) db.exec(script);
    db.prepare(
      `INSERT INTO ${VERSIONS_TABLE} (part, version) VALUES (?, ?) ` +
        'ON CONFLICT (part) DO UPDATE SET version = excluded.version',
    ).run(part.name, latest);
  }).immediate();
}

/**
 * Checks, without writing anything, that the file holds `part` at the version this colony
 * knows: what a read-only connection needs, since it cannot migrate. Throws with what to do
 * when the part is missing, older or newer.
 */
export function checkSchemaPart(db: Database.Database, path: string, part: SchemaPart, contents: string): void {
  const latest = part.migrations.length;
  const current = storedVersion(db, part.name) ?? 0;
  if (current === 0) {
    throw new Error(
      `${path} holds no ${contents} yet (no ${part.name} schema), so there is nothing to read. ` +
        'Open it for writing once (starting a run does) to create it.',
    );
  }
  if (current > latest) {
    throw new Error(
      `${path} holds the ${part.name} schema at version ${current}, newer than the version ${latest} ` +
        `this colony knows. Upgrade colony to open it.`,
    );
  }
  if (current < latest) {
    throw new Error(
      `${path} holds the ${part.name} schema at version ${current}, older than the version ${latest} ` +
        'this colony reads. Open it for writing once to migrate it.',
    );
  }
}
