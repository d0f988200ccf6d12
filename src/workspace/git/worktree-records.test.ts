import { mkdir, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathExists } from '../files/path-exists.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { openRepository, type Repository } from './repository.js';
import { dropWorktreeRecords, worktreeRecordsUnder } from './worktree-records.js';

describe('worktree records under a folder', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let state: string;

  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    state = join(await realpath(temporary.base), 'state');
    await mkdir(state);
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('lists the worktrees under the folder with their branch and whether they are kept, and no other', async () => {
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'colony/worker-a', join(state, 'workspaces', 'worker-a')]);
    await temporary.git(['worktree', 'add', '--quiet', '--detach', join(state, 'views', 'planner-b')]);
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'elsewhere', join(temporary.base, 'elsewhere')]);
    await temporary.git(['worktree', 'lock', '--reason', 'kept', join(state, 'views', 'planner-b')]);
    const records = await worktreeRecordsUnder(repo, state);
    expect(records.map(({ path, branch, locked }) => ({ path, branch, locked })).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: join(state, 'views', 'planner-b'), branch: null, locked: true },
      { path: join(state, 'workspaces', 'worker-a'), branch: 'colony/worker-a', locked: false },
    ]);
    // A folder beside it whose name starts the same is not under it.
    expect(await worktreeRecordsUnder(repo, `${state}-other`)).toEqual([]);
  });

  it('drops the records and leaves the files: git lists the worktree no more', async () => {
    const path = join(state, 'workspaces', 'worker-a');
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'colony/worker-a', path]);
    const dropped = await dropWorktreeRecords(repo, await worktreeRecordsUnder(repo, state));
    expect(dropped).toEqual({ dropped: [path], problems: [] });
    expect(await pathExists(join(path, 'README.md'))).toBe(true);
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain(path);
    expect(await worktreeRecordsUnder(repo, state)).toEqual([]);
  });

  it('finds the record of a worktree whose folder is gone', async () => {
    const path = join(state, 'workspaces', 'worker-a');
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'colony/worker-a', path]);
    await rm(path, { recursive: true });
    expect((await worktreeRecordsUnder(repo, state)).map((record) => record.path)).toEqual([path]);
  });
});
