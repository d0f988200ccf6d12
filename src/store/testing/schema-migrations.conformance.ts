import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** A part of a store's schema as both stores write it: a name and its ordered scripts. */
interface SchemaPart {
  readonly name: string;
  readonly migrations: readonly string[];
}

/** What the suite needs of a store's migrations: a fresh, empty database (or schema) to migrate and look into. */
export interface MigrationsUnderTest {
  migrate(part: SchemaPart): Promise<void>;
  /** Runs one statement there, as another program would, and returns its rows. */
  query(sql: string): Promise<unknown[]>;
  /** The columns of `table`, in their order. */
  columns(table: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

const notesV1: SchemaPart = { name: 'notes', migrations: ['CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)'] };
const notesV2: SchemaPart = {
  name: 'notes',
  migrations: [...notesV1.migrations, "ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown'"],
};

/**
 * The one suite every store's schema migrations pass: versioned parts, each script applied
 * once, a failing migration rolled back whole, and a database colony did not make, or a newer
 * colony did, refused untouched.
 */
export function describeSchemaMigrations(name: string, open: () => Promise<MigrationsUnderTest>): void {
  describe(`schema migrations: ${name}`, () => {
    let underTest: MigrationsUnderTest;

    beforeEach(async () => {
      underTest = await open();
    });

    afterEach(async () => {
      await underTest.cleanup();
    });

    function versions(): Promise<unknown[]> {
      return underTest.query('SELECT part, version FROM schema_versions ORDER BY part');
    }

    it('applies only the scripts a database has not seen, and keeps its rows', async () => {
      await underTest.migrate(notesV1);
      await underTest.query("INSERT INTO notes (id, body) VALUES (1, 'first')");
      await underTest.migrate(notesV1);
      await underTest.migrate(notesV2);
      expect(await underTest.query('SELECT body, author FROM notes')).toEqual([{ body: 'first', author: 'unknown' }]);
      expect(await versions()).toEqual([{ part: 'notes', version: 2 }]);
    });

    it('versions each part on its own', async () => {
      await underTest.migrate(notesV2);
      await underTest.migrate({ name: 'tags', migrations: ['CREATE TABLE tags (name TEXT PRIMARY KEY)'] });
      expect(await versions()).toEqual([
        { part: 'notes', version: 2 },
        { part: 'tags', version: 1 },
      ]);
    });

    it('rolls a failing script back entirely', async () => {
      await underTest.migrate(notesV1);
      const broken = { name: 'notes', migrations: [...notesV1.migrations, 'ALTER TABLE notes ADD COLUMN x TEXT; NOT SQL'] };
      await expect(underTest.migrate(broken)).rejects.toThrow(/syntax error/);
      expect(await versions()).toEqual([{ part: 'notes', version: 1 }]);
      expect(await underTest.columns('notes')).toEqual(['id', 'body']);
    });

    it('refuses a database another program made, touching nothing', async () => {
      await underTest.query('CREATE TABLE customers (id INTEGER PRIMARY KEY)');
      await expect(underTest.migrate(notesV1)).rejects.toThrow(/colony did not create \(it has a table "customers" and no schema_versions table\)/);
      expect(await underTest.columns('notes')).toEqual([]);
      expect(await underTest.columns('schema_versions')).toEqual([]);
    });

    it('refuses a schema a newer colony migrated, touching nothing', async () => {
      await underTest.migrate(notesV2);
      await underTest.query("UPDATE schema_versions SET version = 7 WHERE part = 'notes'");
      await expect(underTest.migrate(notesV2)).rejects.toThrow(/notes schema at version 7, newer than the version 2 this colony knows\. Upgrade colony/);
      expect(await versions()).toEqual([{ part: 'notes', version: 7 }]);
    });
  });
}
