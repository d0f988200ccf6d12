import { realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeToMain } from './merge/merge-to-main.js';
import { excludeFromGit } from './git/repository.js';
import { createMergeTestSetup } from './testing/merge-setup.js';
import type { MergeTestSetup } from './testing/merge-setup.js';
import { createWorktreeProvider } from './providers/worktree/worktree-provider.js';
import { unmergedWork } from './workspace-status.js';

describe('unmergedWork', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'c.txt': 'one\ntwo\nthree\nfour\nfive\n' });
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('is null for a fresh workspace and for one whose work has landed', async () => {
    const workspace = await setup.workspace('fresh');
    expect(await unmergedWork(setup.repo, workspace)).toBeNull();
    await setup.temporary.write('feature.txt', 'feature\n', workspace.path);
    const merged = await mergeToMain(setup.repo, workspace, { message: 'Add feature' });
    expect(merged.status).toBe('landed');
    expect(await unmergedWork(setup.repo, workspace)).toBeNull();
  });

  it('lists uncommitted files by their exact names, renames by their new name', async () => {
    const workspace = await setup.workspace('dirty');
    await setup.temporary.write('README.md', 'edited\n', workspace.path);
    await setup.temporary.write('line\nbreak "quoted".txt', 'odd name\n', workspace.path);
    await setup.temporary.git(['mv', 'c.txt', 'moved file.txt'], workspace.path);
    const work = await unmergedWork(setup.repo, workspace);
    expect(work).toMatchObject({ status: 'unlanded', unmergedCommits: 0, rebaseInProgress: false });
    if (work?.status !== 'unlanded') throw new Error('expected unlanded work');
    expect([...work.uncommittedFiles].sort()).toEqual(['README.md', 'line\nbreak "quoted".txt', 'moved file.txt']);
    expect(work.reason).toMatch(/3 uncommitted file/);
  });

  it('counts commits the trunk lacks', async () => {
    const workspace = await setup.workspace('ahead');
    await setup.temporary.write('feature.txt', 'feature\n', workspace.path);
    await setup.temporary.commitAll('Add feature', workspace.path);
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unlanded', unmergedCommits: 1, uncommittedFiles: [] });
  });

  it('counts commits on the workspace branch after HEAD was detached onto the trunk', async () => {
    const workspace = await setup.workspace('detached');
    await setup.temporary.write('feature.txt', 'feature\n', workspace.path);
    await setup.temporary.commitAll('Add feature', workspace.path);
    await setup.temporary.git(['switch', '--quiet', '--detach', 'main'], workspace.path);
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unlanded', unmergedCommits: 1 });
  });

  it('counts commits made on a detached HEAD that the branch does not have', async () => {
    const workspace = await setup.workspace('detached-commits');
    await setup.temporary.git(['switch', '--quiet', '--detach'], workspace.path);
    await setup.temporary.write('feature.txt', 'feature\n', workspace.path);
    await setup.temporary.commitAll('Add feature', workspace.path);
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unlanded', unmergedCommits: 1 });
  });

  it('is unreadable when the workspace lost its .git inside the user’s checkout, where git would read the checkout instead', async () => {
    await excludeFromGit(setup.repo, '/.colony/');
    const workspace = await createWorktreeProvider(setup.repo).create({ id: 'inside', parentDir: join(setup.repo.root, '.colony', 'workspaces') });
    await setup.temporary.write('notes.txt', 'uncommitted work\n', workspace.path);
    await rm(join(workspace.path, '.git'));
    const work = await unmergedWork(setup.repo, workspace);
    expect(work).toMatchObject({ status: 'unreadable' });
    expect(work?.reason).toMatch(/\.git file .* is missing/);
  });

  it('is unreadable when the workspace lost its .git inside the git directory, where git would take that for a bare repository', async () => {
    const workspace = await createWorktreeProvider(setup.repo).create({ id: 'in-git-dir', parentDir: join(setup.repo.gitDir, 'colony', 'workspaces') });
    await setup.temporary.write('notes.txt', 'uncommitted work\n', workspace.path);
    await rm(join(workspace.path, '.git'));
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unreadable' });
  });

  it('is unreadable when the workspace lost its .git and git finds no repository at all', async () => {
    const workspace = await setup.workspace('no-git');
    await rm(join(workspace.path, '.git'));
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unreadable', reason: expect.stringMatching(/git/) });
  });

  it('is unreadable when the workspace was turned into a repository of its own, even a clean one', async () => {
    const workspace = await setup.workspace('reinit');
    await setup.temporary.write('notes.txt', 'uncommitted work\n', workspace.path);
    await rm(join(workspace.path, '.git'));
    await setup.temporary.git(['init', '--quiet', '--initial-branch=main'], workspace.path);
    await setup.temporary.commitAll('Everything', workspace.path);
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unreadable', reason: expect.stringMatching(/another repository/) });
  });

  it('is unreadable when git cannot read the status, rather than reporting nothing', async () => {
    const workspace = await setup.workspace('broken-index');
    const indexPath = (await setup.temporary.git(['rev-parse', '--path-format=absolute', '--git-path', 'index'], workspace.path)).trim();
    await writeFile(indexPath, 'not an index');
    const work = await unmergedWork(setup.repo, workspace);
    expect(work).toMatchObject({ status: 'unreadable', reason: expect.stringMatching(/status/) });
  });

  it('is unreadable when the workspace directory is gone', async () => {
    const workspace = await setup.workspace('vanished');
    await rm(workspace.path, { recursive: true, force: true });
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unreadable' });
  });

  it('is unreadable when the workspace branch is gone', async () => {
    const workspace = await setup.workspace('branchless');
    await setup.temporary.git(['switch', '--quiet', '--detach'], workspace.path);
    await setup.temporary.git(['branch', '--quiet', '-D', workspace.branch], workspace.path);
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unreadable', reason: expect.stringMatching(/colony\/branchless/) });
  });

  it('reports a rebase stopped at a conflict', async () => {
    const workspace = await setup.workspace('conflicted');
    await setup.temporary.write('README.md', 'workspace version\n', workspace.path);
    await setup.temporary.write('README.md', 'trunk version\n');
    await setup.temporary.commitAll('Trunk edit');
    const merged = await mergeToMain(setup.repo, workspace, { message: 'Edit README' });
    expect(merged.status).toBe('conflicted');
    expect(await unmergedWork(setup.repo, workspace)).toMatchObject({ status: 'unlanded', rebaseInProgress: true });
  });

  it('accepts a workspace path reached through a symbolic link', async () => {
    const workspace = await setup.workspace('real');
    const linkParent = join(await realpath(setup.temporary.base), 'link');
    await symlink(join(await realpath(setup.temporary.base), 'workspaces'), linkParent);
    expect(await unmergedWork(setup.repo, { ...workspace, path: join(linkParent, 'real') })).toBeNull();
  });
});
