import { mkdir, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { excludeFromGit, findDirtyFiles, openRepository } from './repository.js';
import type { Repository } from './repository.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

function opened(result: Awaited<ReturnType<typeof openRepository>>): Repository {
  if (!result.ok) throw new Error(`expected the repository to open: ${result.error}`);
  return result.repo;
}

describe('openRepository', () => {
  let temporary: TemporaryRepository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/app.ts': 'export {};\n' });
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('finds the root, the trunk and the common git directory, from a subdirectory too', async () => {
    const repo = opened(await openRepository(join(temporary.root, 'src')));
    const root = await realpath(temporary.root);
    expect(repo).toEqual({ root, mainBranch: 'main', checkedOutBranch: 'main', gitDir: join(root, '.git') });
  });

  it('takes the trunk from the branch that is checked out', async () => {
    await temporary.git(['switch', '--quiet', '-c', 'develop']);
    expect(opened(await openRepository(temporary.root)).mainBranch).toBe('develop');
  });

  it('says when the directory does not exist', async () => {
    const result = await openRepository(join(temporary.base, 'missing'));
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/does not exist/) });
  });

  it('says to run git init or pass --repo when the directory is not a repository', async () => {
    const plain = join(temporary.base, 'plain');
    await mkdir(plain);
    const result = await openRepository(plain);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/not inside a git repository/);
      expect(result.error).toMatch(/git init/);
      expect(result.error).toMatch(/--repo/);
    }
  });

  it('says to make a first commit when there is none', async () => {
    const empty = join(temporary.base, 'empty');
    await mkdir(empty);
    await temporary.git(['init', '--quiet', '--initial-branch=main'], empty);
    const result = await openRepository(empty);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/no commits yet.*Make a first commit/) });
  });

  it('says to check out a branch when HEAD is detached', async () => {
    await temporary.git(['switch', '--quiet', '--detach', 'HEAD']);
    const result = await openRepository(temporary.root);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/detached HEAD.*Check out the branch/) });
  });

  it('refuses a bare repository', async () => {
    const bare = join(temporary.base, 'bare.git');
    await temporary.git(['clone', '--quiet', '--bare', temporary.root, bare], temporary.base);
    const result = await openRepository(bare);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/bare repository/) });
  });
});

describe('findDirtyFiles', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    repo = opened(await openRepository(temporary.root));
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('is empty for a clean checkout', async () => {
    expect(await findDirtyFiles(repo)).toEqual([]);
  });

  it('lists modified and staged tracked files but not untracked ones', async () => {
    await temporary.write('a.txt', 'changed\n');
    await temporary.write('b.txt', 'staged\n');
    await temporary.git(['add', 'b.txt']);
    await temporary.write('new.txt', 'untracked\n');
    expect((await findDirtyFiles(repo)).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('lists deleted and renamed files under their current names', async () => {
    await rm(join(temporary.root, 'a.txt'));
    await temporary.git(['mv', 'c.txt', 'renamed.txt']);
    expect((await findDirtyFiles(repo)).sort()).toEqual(['a.txt', 'renamed.txt']);
  });

  it('lists a rename git sees only in the working tree under its new name', async () => {
    // An intent-to-add file plus a deleted one with the same content is a worktree-column
    // rename (" R"), which -z follows with the source path like a staged one.
    await rm(join(temporary.root, 'c.txt'));
    await temporary.write('renamed.txt', 'c\n');
    await temporary.git(['add', '--intent-to-add', 'renamed.txt']);
    expect(await temporary.git(['status', '--porcelain'])).toBe(' R c.txt -> renamed.txt\n');
    expect(await findDirtyFiles(repo)).toEqual(['renamed.txt']);
  });
});

describe('excludeFromGit', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    repo = opened(await openRepository(temporary.root));
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('hides the directory from git status and adds the line only once', async () => {
    await temporary.write('.colony/state.db', 'state\n');
    expect(await temporary.git(['status', '--porcelain'])).toContain('.colony/');
    await excludeFromGit(repo, '/.colony/');
    await excludeFromGit(repo, '/.colony/');
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    const exclude = await readFile(join(repo.gitDir, 'info', 'exclude'), 'utf8');
    expect(exclude.split('\n').filter((line) => line === '/.colony/')).toHaveLength(1);
  });

  it('creates info/exclude when the repository has none and keeps existing lines', async () => {
    await rm(join(repo.gitDir, 'info'), { recursive: true, force: true });
    await excludeFromGit(repo, '*.tmp');
    await excludeFromGit(repo, '/.colony/');
    expect(await readFile(join(repo.gitDir, 'info', 'exclude'), 'utf8')).toBe('*.tmp\n/.colony/\n');
  });
});
