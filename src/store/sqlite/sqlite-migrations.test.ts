import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSchemaPart } from './sqlite-migrations.js';

describe('migrateSchemaPart', () => {
  let dir: string;
  let db: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colony-migrations-'));
    db = new Database(join(dir, 'store.db'));
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const notesV1 = { name: 'notes', migrations: ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)'] };
  const notesV2 = {
    name: 'notes',
    migrations: [...notesV1.migrations, "ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown'"],
  };

  function versions(): unknown[] {
    return db.prepare('SELECT part, version FROM schema_versions ORDER BY part').all();
  }

  it('applies only the scripts a file has not seen, and keeps its rows', () => {
    migrateSchemaPart(db, 'store.db', notesV1);
    db.prepare('INSERT INTO notes (body) VALUES (?)').run('first');
    migrateSchemaPart(db, 'store.db', notesV1);
    migrateSchemaPart(db, 'store.db', notesV2);
    expect(db.prepare('SELECT body, author FROM notes').all()).toEqual([{ body: 'first', author: 'unknown' }]);
    expect(versions()).toEqual([{ part: 'notes', version: 2 }]);
  });

  it('versions each part of one file on its own', () => {
    migrateSchemaPart(db, 'store.db', notesV2);
    migrateSchemaPart(db, 'store.db', { name: 'tags', migrations: ['CREATE TABLE tags (name TEXT PRIMARY KEY)'] });
    expect(versions()).toEqual([
      { part: 'notes', version: 2 },
      { part: 'tags', version: 1 },
    ]);
  });

  it('rolls a failing script back entirely', () => {
    migrateSchemaPart(db, 'store.db', notesV1);
    const broken = { name: 'notes', migrations: [...notesV1.migrations, 'ALTER TABLE notes ADD COLUMN x TEXT; NOT SQL'] };
    expect(() => migrateSchemaPart(db, 'store.db', broken)).toThrow(/syntax error/);
    expect(versions()).toEqual([{ part: 'notes', version: 1 }]);
    expect(db.prepare('SELECT name FROM pragma_table_info(?)').all('notes')).toEqual([{ name: 'id' }, { name: 'body' }]);
  });
});
