import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareStateDir } from './state-directory.js';

let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'colony-state-dir-'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('prepareStateDir', () => {
  it('creates the directory when its parent exists', () => {
    expect(prepareStateDir(join(base, 'state'))).toEqual({ ok: true });
    expect(existsSync(join(base, 'state'))).toBe(true);
  });

  it('refuses a file and a missing parent, saying what to do', () => {
    writeFileSync(join(base, 'file'), 'x');
    const file = prepareStateDir(join(base, 'file'));
    expect(file).toMatchObject({ ok: false, error: expect.stringMatching(/is a file, not a directory: pass another path with --state/) });
    const deep = prepareStateDir(join(base, 'missing', 'state'));
    expect(deep).toMatchObject({ ok: false, error: expect.stringMatching(/missing does not exist/) });
    expect(existsSync(join(base, 'missing'))).toBe(false);
  });
});
