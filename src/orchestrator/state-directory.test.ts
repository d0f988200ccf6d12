import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockStateDir, prepareStateDir } from './state-directory.js';

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

describe('lockStateDir', () => {
  it('lets one run in and refuses a second while the first holds it', () => {
    const first = lockStateDir(base);
    expect(first.ok).toBe(true);
    const second = lockStateDir(base);
    expect(second).toMatchObject({ ok: false, error: expect.stringMatching(/another colony run \(process \d+, since .*\) is using/) });
    if (first.ok) first.lock.release();
    const third = lockStateDir(base);
    expect(third.ok).toBe(true);
    if (third.ok) third.lock.release();
  });

  it('takes over a lock left by a process that has died', () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    writeFileSync(join(base, 'run.lock'), JSON.stringify({ pid: deadPid, host: hostname(), since: '2026-01-01T00:00:00Z' }));
    const taken = lockStateDir(base);
    expect(taken.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(base, 'run.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    if (taken.ok) taken.lock.release();
    expect(existsSync(join(base, 'run.lock'))).toBe(false);
  });

  it('does not take over a lock held on another machine', () => {
    writeFileSync(join(base, 'run.lock'), JSON.stringify({ pid: 1, host: 'elsewhere.invalid', since: 'now' }));
    expect(lockStateDir(base)).toMatchObject({ ok: false, error: expect.stringMatching(/locked by a colony run on elsewhere\.invalid/) });
  });
});
