import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePorcelainStatus, readStatus } from './git-status.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

describe('parsePorcelainStatus', () => {
  it('reads plain entries, staged renames and worktree renames with their sources', () => {
    const output = ' M a.txt\0R  new.txt\0old.txt\0 R moved.txt\0gone.txt\0?? dir/odd\nname.txt\0';
    expect(parsePorcelainStatus(output)).toEqual({
      ok: true,
      entries: [
        { staged: ' ', unstaged: 'M', path: 'a.txt', renamedFrom: null },
        { staged: 'R', unstaged: ' ', path: 'new.txt', renamedFrom: 'old.txt' },
        { staged: ' ', unstaged: 'R', path: 'moved.txt', renamedFrom: 'gone.txt' },
        { staged: '?', unstaged: '?', path: 'dir/odd\nname.txt', renamedFrom: null },
      ],
    });
  });

  it('reads empty output as a clean tree', () => {
    expect(parsePorcelainStatus('')).toEqual({ ok: true, entries: [] });
  });

  it('refuses output it cannot read instead of guessing', () => {
    expect(parsePorcelainStatus(' M a.txt\n')).toMatchObject({ ok: false, error: expect.stringMatching(/-z/) });
    expect(parsePorcelainStatus('fatal: oops\0')).toMatchObject({ ok: false, error: expect.stringMatching(/XY path/) });
    expect(parsePorcelainStatus('R  new.txt\0')).toMatchObject({ ok: false, error: expect.stringMatching(/source/) });
  });
});

describe('readStatus', () => {
  let temporary: TemporaryRepository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('lists changes, with untracked files only when asked', async () => {
    await temporary.write('a.txt', 'changed\n');
    await temporary.git(['mv', 'b.txt', 'b renamed.txt']);
    await temporary.write('new\tfile.txt', 'untracked\n');
    const tracked = await readStatus(temporary.root, { untracked: false });
    expect(tracked).toEqual({
      ok: true,
      entries: [
        { staged: ' ', unstaged: 'M', path: 'a.txt', renamedFrom: null },
        { staged: 'R', unstaged: ' ', path: 'b renamed.txt', renamedFrom: 'b.txt' },
      ],
    });
    const all = await readStatus(temporary.root, { untracked: true });
    expect(all.ok && all.entries.map((entry) => entry.path)).toEqual(['a.txt', 'b renamed.txt', 'new\tfile.txt']);
  });

  it('reports a checkout git cannot read as an error, not as clean', async () => {
    await rm(join(temporary.root, '.git'), { recursive: true, force: true });
    expect(await readStatus(temporary.root, { untracked: true })).toMatchObject({ ok: false, error: expect.stringMatching(/not a git repository/) });
  });
});
