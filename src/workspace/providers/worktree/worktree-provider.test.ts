import { realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { excludeFromGit, openRepository, type Repository } from '../../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../testing/temporary-repository.js';
import { describeWorkspaceProviderConformance } from '../../testing/workspace-provider.conformance.js';
import type { WorkspaceProvider } from '../../workspace-provider.js';
import { createWorktreeProvider, parseWorktreeList } from './worktree-provider.js';

describeWorkspaceProviderConformance('worktree', (repo) => createWorktreeProvider(repo));

describe('worktree workspaces', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let provider: WorkspaceProvider;
  let parentDir: string;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n' });
    const result = await openRepository(temporary.root);
    if (!result.ok) throw new Error(result.error);
    repo = result.repo;
    provider = createWorktreeProvider(repo);
    parentDir = join(await realpath(temporary.base), 'workspaces');
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('leaves the main checkout untouched and clean when workspaces live in an excluded .colony/', async () => {
    await excludeFromGit(repo, '/.colony/');
    const workspace = await provider.create({ id: 'inside', parentDir: join(repo.root, '.colony', 'workspaces') });
    await temporary.write('scratch.txt', 'work in progress\n', workspace.path);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('?? scratch.txt\n');
  });

  it('makes workspaces inside the git directory, where a state directory lives by default, that work like any other and that git clean never reaches', async () => {
    const workspace = await provider.create({ id: 'in-git-dir', parentDir: join(repo.gitDir, 'colony', 'workspaces') });
    await temporary.write('scratch.txt', 'work in progress\n', workspace.path);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('?? scratch.txt\n');
    await temporary.git(['clean', '-fdx']);
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('?? scratch.txt\n');
    expect(await provider.remove(workspace, { deleteBranch: true })).toMatchObject({ removed: true });
  });

  it('keeps a workspace that was turned into a repository of its own', async () => {
    const workspace = await provider.create({ id: 'reinit', parentDir });
    await rm(join(workspace.path, '.git'));
    await temporary.git(['init', '--quiet', '--initial-branch=main'], workspace.path);
    await temporary.write('notes.txt', 'work\n', workspace.path);
    await temporary.commitAll('Everything', workspace.path);
    const result = await provider.remove(workspace, { deleteBranch: true });
    expect(result.removed).toBe(false);
    expect(await temporary.git(['log', '--format=%s'], workspace.path)).toBe('Everything\n');
  });

  it('reads git worktree list --porcelain -z', () => {
    const listed = 'worktree /repo\0HEAD aaa\0branch refs/heads/main\0\0worktree /w/one\0HEAD bbb\0detached\0locked kept\0\0';
    expect(parseWorktreeList(listed)).toEqual([
      { path: '/repo', head: 'aaa' },
      { path: '/w/one', head: 'bbb' },
    ]);
  });
});
