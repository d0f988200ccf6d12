import { readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathExists } from './path-exists.js';
import { excludeFromGit, openRepository } from './repository.js';
import type { Repository } from './repository.js';
import { createTemporaryRepository } from './testing/temporary-repository.js';
import type { TemporaryRepository } from './testing/temporary-repository.js';
import { createWorkspace, keepWorkspace, removeWorkspace } from './workspace.js';

describe('workspaces', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let parentDir: string;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/app.ts': 'export const app = 1;\n' });
    const result = await openRepository(temporary.root);
    if (!result.ok) throw new Error(result.error);
    repo = result.repo;
    parentDir = join(await realpath(temporary.base), 'workspaces');
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('checks out the trunk commit on a new colony/<id> branch that shares the object store', async () => {
    const trunkCommit = (await temporary.git(['rev-parse', 'main'])).trim();
    const workspace = await createWorkspace(repo, { id: 'task-1', parentDir });
    expect(workspace).toEqual({ id: 'task-1', path: join(parentDir, 'task-1'), branch: 'colony/task-1', baseCommit: trunkCommit });
    expect(await readFile(join(workspace.path, 'src/app.ts'), 'utf8')).toBe('export const app = 1;\n');
    expect((await temporary.git(['rev-parse', 'colony/task-1'])).trim()).toBe(trunkCommit);
    expect((await temporary.git(['symbolic-ref', 'HEAD'], workspace.path)).trim()).toBe('refs/heads/colony/task-1');
    // A linked worktree: .git is a file naming a directory inside the main repository.
    const dotGit = await readFile(join(workspace.path, '.git'), 'utf8');
    expect(dotGit.trim()).toBe(`gitdir: ${join(repo.gitDir, 'worktrees', 'task-1')}`);
    const commonDir = await temporary.git(['rev-parse', '--path-format=absolute', '--git-common-dir'], workspace.path);
    expect(commonDir.trim()).toBe(repo.gitDir);
    // An object written in the workspace is visible from the main repository at once.
    await temporary.write('new.txt', 'made in the workspace\n', workspace.path);
    const commit = await temporary.commitAll('Add new.txt', workspace.path);
    expect((await temporary.git(['cat-file', '-t', commit])).trim()).toBe('commit');
  });

  it('leaves the main checkout untouched and clean when workspaces live in an excluded .colony/', async () => {
    await excludeFromGit(repo, '/.colony/');
    const workspace = await createWorkspace(repo, { id: 'inside', parentDir: join(repo.root, '.colony', 'workspaces') });
    await temporary.write('scratch.txt', 'work in progress\n', workspace.path);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('?? scratch.txt\n');
  });

  it('creates and removes many workspaces at once', async () => {
    const ids = Array.from({ length: 8 }, (_, index) => `parallel-${index}`);
    const workspaces = await Promise.all(ids.map((id) => createWorkspace(repo, { id, parentDir })));
    const listed = await temporary.git(['worktree', 'list', '--porcelain']);
    for (const workspace of workspaces) expect(listed).toContain(`worktree ${workspace.path}\n`);
    const results = await Promise.all(workspaces.map((workspace) => removeWorkspace(repo, workspace, { deleteBranch: true })));
    expect(results).toEqual(workspaces.map(() => ({ removed: true })));
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('parallel-');
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('');
  });

  it('refuses an id that is not safe as a branch and directory name', async () => {
    await expect(createWorkspace(repo, { id: '../escape', parentDir })).rejects.toThrow(/workspace id/);
    await expect(createWorkspace(repo, { id: 'x.lock', parentDir })).rejects.toThrow(/workspace id/);
  });

  it('refuses to reuse an id whose branch exists, with git’s reason', async () => {
    const first = await createWorkspace(repo, { id: 'twice', parentDir });
    await removeWorkspace(repo, first, { deleteBranch: false });
    await expect(createWorkspace(repo, { id: 'twice', parentDir })).rejects.toThrow(/already exists/);
  });

  it('removes the worktree with its uncommitted changes and keeps the branch by default', async () => {
    const workspace = await createWorkspace(repo, { id: 'keep', parentDir });
    await temporary.write('README.md', 'edited\n', workspace.path);
    await temporary.write('untracked.txt', 'x\n', workspace.path);
    expect(await removeWorkspace(repo, workspace, { deleteBranch: false })).toEqual({ removed: true });
    expect(await pathExists(workspace.path)).toBe(false);
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('keep');
    expect(await temporary.git(['branch', '--list', 'colony/keep'])).toContain('colony/keep');
  });

  it('deletes the branch when asked, and copes with a directory that is already gone', async () => {
    const workspace = await createWorkspace(repo, { id: 'gone', parentDir });
    await rm(workspace.path, { recursive: true, force: true });
    expect(await removeWorkspace(repo, workspace, { deleteBranch: true })).toEqual({ removed: true });
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('gone');
    expect(await temporary.git(['branch', '--list', 'colony/gone'])).toBe('');
    expect(await removeWorkspace(repo, workspace, { deleteBranch: true })).toEqual({ removed: true });
  });

  it('keeps a workspace whose .git is gone, files and branch, instead of deleting the directory', async () => {
    const workspace = await createWorkspace(repo, { id: 'damaged', parentDir });
    await temporary.write('notes.txt', 'uncommitted work\n', workspace.path);
    await rm(join(workspace.path, '.git'));
    const result = await removeWorkspace(repo, workspace, { deleteBranch: true });
    expect(result).toEqual({ removed: false, reason: expect.stringMatching(/was kept.*git would not remove it/s) });
    expect(await temporary.read('notes.txt', workspace.path)).toBe('uncommitted work\n');
    expect(await temporary.git(['branch', '--list', 'colony/damaged'])).toContain('colony/damaged');
  });

  it('keeps a workspace that was turned into a repository of its own', async () => {
    const workspace = await createWorkspace(repo, { id: 'reinit', parentDir });
    await rm(join(workspace.path, '.git'));
    await temporary.git(['init', '--quiet', '--initial-branch=main'], workspace.path);
    await temporary.write('notes.txt', 'work\n', workspace.path);
    await temporary.commitAll('Everything', workspace.path);
    const result = await removeWorkspace(repo, workspace, { deleteBranch: true });
    expect(result.removed).toBe(false);
    expect(await temporary.git(['log', '--format=%s'], workspace.path)).toBe('Everything\n');
  });

  it('keeps a branch with commits the trunk lacks, even after HEAD left it, and says so', async () => {
    const workspace = await createWorkspace(repo, { id: 'unlanded', parentDir });
    await temporary.write('feature.txt', 'feature\n', workspace.path);
    const commit = await temporary.commitAll('Add feature', workspace.path);
    await temporary.git(['switch', '--quiet', '--detach', 'main'], workspace.path);
    const result = await removeWorkspace(repo, workspace, { deleteBranch: true });
    expect(result).toEqual({ removed: false, reason: expect.stringMatching(/colony\/unlanded was kept.*1 of its commits/) });
    expect(await pathExists(workspace.path)).toBe(false);
    expect((await temporary.git(['rev-parse', 'refs/heads/colony/unlanded'])).trim()).toBe(commit);
  });

  it('judges the branch against the trunk, not against whatever the user has checked out', async () => {
    const workspace = await createWorkspace(repo, { id: 'judged', parentDir });
    await temporary.write('feature.txt', 'feature\n', workspace.path);
    const commit = await temporary.commitAll('Add feature', workspace.path);
    await temporary.git(['switch', '--quiet', '-c', 'elsewhere', commit]);
    const result = await removeWorkspace(repo, workspace, { deleteBranch: true });
    expect(result.removed).toBe(false);
    expect((await temporary.git(['rev-parse', 'refs/heads/colony/judged'])).trim()).toBe(commit);
  });

  it('deletes a branch the trunk contains, and an unlanded one only when forced', async () => {
    const landed = await createWorkspace(repo, { id: 'landed', parentDir });
    await temporary.write('feature.txt', 'feature\n', landed.path);
    const commit = await temporary.commitAll('Add feature', landed.path);
    await temporary.git(['merge', '--quiet', '--ff-only', commit]);
    expect(await removeWorkspace(repo, landed, { deleteBranch: true })).toEqual({ removed: true });
    expect(await temporary.git(['branch', '--list', 'colony/landed'])).toBe('');

    const unwanted = await createWorkspace(repo, { id: 'unwanted', parentDir });
    await temporary.write('other.txt', 'other\n', unwanted.path);
    await temporary.commitAll('Add other', unwanted.path);
    expect(await removeWorkspace(repo, unwanted, { deleteBranch: true, forceDeleteBranch: true })).toEqual({ removed: true });
    expect(await temporary.git(['branch', '--list', 'colony/unwanted'])).toBe('');
  });

  it('locks a kept workspace so pruning never drops its record', async () => {
    const workspace = await createWorkspace(repo, { id: 'kept', parentDir });
    expect(await keepWorkspace(repo, workspace, 'colony kept this workspace: it holds 1 uncommitted file')).toEqual({ locked: true });
    expect(await keepWorkspace(repo, workspace, 'again')).toEqual({ locked: true });
    const listing = await temporary.git(['worktree', 'list', '--porcelain']);
    expect(listing).toContain('locked colony kept this workspace: it holds 1 uncommitted file');
    await rm(workspace.path, { recursive: true, force: true });
    await temporary.git(['worktree', 'prune']);
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).toContain(workspace.path);
  });
});
