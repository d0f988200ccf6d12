import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shareDirectoryWithGroup } from './group-access.js';

const GROUP = 2_000_000_000;
const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colony-group-access-'));
  dirs.push(dir);
  return dir;
}

describe.skipIf(!isRoot)('shareDirectoryWithGroup (needs root to change groups)', () => {
  it('makes a missing directory, and it and the directories below it group-writable and set-group-ID', async () => {
    const base = scratch();
    const existing = join(base, 'shared', 'old', 'deeper');
    mkdirSync(existing, { recursive: true, mode: 0o755 });
    writeFileSync(join(base, 'shared', 'old', 'file.txt'), 'x', { mode: 0o644 });
    await shareDirectoryWithGroup(join(base, 'shared'), GROUP);
    for (const dir of [join(base, 'shared'), join(base, 'shared', 'old'), existing]) {
      const info = statSync(dir);
      expect(info.gid).toBe(GROUP);
      expect(info.mode & 0o2070).toBe(0o2070);
    }
    // Files found there are left as they were.
    const file = statSync(join(base, 'shared', 'old', 'file.txt'));
    expect(file.gid).not.toBe(GROUP);
    expect(file.mode & 0o777).toBe(0o644);
  });

  it('gives what is made inside afterwards the group', async () => {
    const dir = join(scratch(), 'workspaces');
    await shareDirectoryWithGroup(dir, GROUP);
    mkdirSync(join(dir, 'ws-1'));
    writeFileSync(join(dir, 'ws-1', 'a.txt'), 'a');
    expect(statSync(join(dir, 'ws-1')).gid).toBe(GROUP);
    expect(statSync(join(dir, 'ws-1')).mode & 0o2000).toBe(0o2000);
    expect(statSync(join(dir, 'ws-1', 'a.txt')).gid).toBe(GROUP);
  });

  it('does not follow a symbolic link out of the directory', async () => {
    const base = scratch();
    const outside = join(base, 'outside');
    mkdirSync(outside, { mode: 0o755 });
    mkdirSync(join(base, 'shared'));
    symlinkSync(outside, join(base, 'shared', 'link'));
    await shareDirectoryWithGroup(join(base, 'shared'), GROUP);
    expect(statSync(outside).gid).not.toBe(GROUP);
    expect(statSync(outside).mode & 0o2020).toBe(0);
  });
});
