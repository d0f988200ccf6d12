import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresBinDir, startPostgresCluster } from './postgres-cluster.js';

describe('the test PostgreSQL cluster', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('fails, saying what to install, where the server programs are missing', async () => {
    await expect(startPostgresCluster(join(tmpdir(), 'no-postgresql-here'))).rejects.toThrow(
      /need PostgreSQL's server programs \(initdb, pg_ctl\).*apt-get install postgresql.*COLONY_SKIP_POSTGRES_TESTS=1/s,
    );
  });

  it('takes the newest version installed, whatever its number', () => {
    const root = mkdtempSync(join(tmpdir(), 'colony-pg-root-'));
    dirs.push(root);
    for (const version of ['9.6', '15', '17', '16']) {
      mkdirSync(join(root, version, 'bin'), { recursive: true });
      if (version !== '17') writeFileSync(join(root, version, 'bin', 'initdb'), '');
    }
    expect(postgresBinDir(root)).toBe(join(root, '16', 'bin'));
    expect(postgresBinDir(join(root, 'none'))).toBeUndefined();
  });
});
