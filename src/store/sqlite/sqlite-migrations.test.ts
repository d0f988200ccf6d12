import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describeSchemaMigrations } from '../testing/schema-migrations.conformance.js';
import { migrateSchemaPart } from './sqlite-migrations.js';

describeSchemaMigrations('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'colony-migrations-'));
  const db = new Database(join(dir, 'store.db'));
  return {
    migrate: async (part) => migrateSchemaPart(db, 'store.db', part),
    query: async (sql) => {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all();
      statement.run();
      return [];
    },
    columns: async (table) => (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((column) => column.name),
    cleanup: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
