import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireRunLock, lockHolderIsAlive } from './run-lock.js';

let dir: string;
let lockPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colony-lock-'));
  lockPath = join(dir, 'run.lock');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A separate process that takes the lock the way colony does, says so, and holds it until killed. */
function holdInAnotherProcess() {
  const source = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(lockPath)}, { timeout: 0 });
    db.exec('BEGIN IMMEDIATE');
    require('fs').writeFileSync(${JSON.stringify(`${lockPath}.json`)}, JSON.stringify({ pid: process.pid, since: 'just now' }));
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  const held = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { child, held };
}

describe('acquireRunLock', () => {
  it('lets one run in at a time within a process', () => {
    const first = acquireRunLock(lockPath, 'the repository /r');
    expect(first.ok).toBe(true);
    const second = acquireRunLock(lockPath, 'the repository /r');
    expect(second).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^another colony run \(process \d+, since .*\) is working on the repository \/r\. Wait for it/),
    });
    if (first.ok) first.lock.release();
    const third = acquireRunLock(lockPath, 'the repository /r');
    expect(third.ok).toBe(true);
    expect(lockHolderIsAlive(lockPath)).toBe(true);
    if (third.ok) third.lock.release();
    expect(existsSync(`${lockPath}.json`)).toBe(false);
    expect(lockHolderIsAlive(lockPath)).toBe(false);
  });

  it('refuses while another process holds it, and is free as soon as that process dies', async () => {
    const { child, held } = holdInAnotherProcess();
    await held;
    expect(lockHolderIsAlive(lockPath)).toBe(true);
    expect(acquireRunLock(lockPath, 'the repository /r')).toMatchObject({
      ok: false,
      error: expect.stringMatching(new RegExp(`process ${child.pid}, since just now`)),
    });
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    // Killed without releasing anything: the operating system dropped its lock, and the holder
    // file it left names a process that is gone.
    expect(existsSync(`${lockPath}.json`)).toBe(true);
    expect(lockHolderIsAlive(lockPath)).toBe(false);
    const taken = acquireRunLock(lockPath, 'the repository /r');
    expect(taken.ok).toBe(true);
    if (taken.ok) taken.lock.release();
  });

  it('says plainly when the lock cannot be created', () => {
    const result = acquireRunLock(join(dir, 'missing', 'run.lock'), 'x');
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^cannot create the lock .*missing\/run\.lock/) });
  });
});
