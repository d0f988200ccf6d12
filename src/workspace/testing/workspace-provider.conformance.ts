import { mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStatus } from '../git/git-status.js';
import { mergeToMain } from '../merge/merge-to-main.js';
import { pathExists } from '../files/path-exists.js';
import { openRepository, type Repository } from '../git/repository.js';
import { unmountOverlaysUnder } from '../providers/overlay/overlay-mount.js';
import { createTemporaryRepository, type TemporaryRepository } from './temporary-repository.js';
import type { WorkspaceProvider } from '../workspace-provider.js';
import { unmergedWork } from '../workspace-status.js';

/** Every file (not directory) under `dir`, relative to it; none when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((entry) => !entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
  } catch {
    return [];
  }
}

/** Makes the provider under test for a repository; `storageDir` is its own to use. Called again to open it as a later process would. */
export type OpenWorkspaceProvider = (repo: Repository, storageDir: string) => WorkspaceProvider;

const FILES = { 'README.md': '# project\n', 'src/app.ts': 'export const app = 1;\n', '.gitignore': 'node_modules/\n' };

/**
 * The one suite every WorkspaceProvider must pass, with real git in a real temporary
 * repository. Whatever is mounted under the temporary directory is unmounted after each test,
 * failed or not.
 */
export function describeWorkspaceProviderConformance(name: string, open: OpenWorkspaceProvider): void {
  describe(`WorkspaceProvider conformance: ${name}`, () => {
    let temporary: TemporaryRepository;
    let repo: Repository;
    let provider: WorkspaceProvider;
    let storageDir: string;
    let parentDir: string;

    beforeEach(async () => {
      temporary = await createTemporaryRepository(FILES);
      const opened = await openRepository(temporary.root);
      if (!opened.ok) throw new Error(opened.error);
      repo = opened.repo;
      const base = await realpath(temporary.base);
      storageDir = join(base, 'storage');
      parentDir = join(base, 'workspaces');
      provider = open(repo, storageDir);
    });

    afterEach(async () => {
      await unmountOverlaysUnder(await realpath(temporary.base));
      await temporary.remove();
    });

    const git = (args: readonly string[], cwd?: string) => temporary.git(args, cwd);
    const mainCommit = async () => (await git(['rev-parse', 'refs/heads/main'])).trim();
    const create = (id: string, sharedLayers?: readonly string[]) =>
      provider.create({ id, parentDir, ...(sharedLayers === undefined ? {} : { sharedLayers }) });

    it('makes a linked worktree on colony/<id> at the trunk commit, clean, that git lists', async () => {
      const workspace = await create('task-1');
      expect(workspace).toEqual({
        id: 'task-1',
        path: join(parentDir, 'task-1'),
        gitDir: join(repo.gitDir, 'worktrees', 'task-1'),
        branch: 'colony/task-1',
        baseCommit: await mainCommit(),
        method: provider.method,
      });
      expect(await temporary.read('src/app.ts', workspace.path)).toBe('export const app = 1;\n');
      expect((await git(['symbolic-ref', 'HEAD'], workspace.path)).trim()).toBe('refs/heads/colony/task-1');
      expect((await git(['rev-parse', 'colony/task-1'])).trim()).toBe(workspace.baseCommit);
      expect((await readFile(join(workspace.path, '.git'), 'utf8')).trim()).toBe(`gitdir: ${join(repo.gitDir, 'worktrees', 'task-1')}`);
      expect((await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], workspace.path)).trim()).toBe(repo.gitDir);
      expect(await git(['status', '--porcelain', '--untracked-files=all'], workspace.path)).toBe('');
      expect(await git(['worktree', 'list', '--porcelain'])).toContain(`worktree ${workspace.path}\nHEAD ${workspace.baseCommit}\nbranch refs/heads/colony/task-1\n`);
      expect(await unmergedWork(repo, workspace)).toBeNull();
      // Objects written in the workspace are in the repository's own store at once.
      await temporary.write('new.txt', 'made in the workspace\n', workspace.path);
      const commit = await temporary.commitAll('Add new.txt', workspace.path);
      expect((await git(['cat-file', '-t', commit])).trim()).toBe('commit');
    });

    it('starts at the trunk as it is now, after the trunk moved on', async () => {
      const first = await create('early');
      await temporary.write('src/app.ts', 'export const app = 2;\n');
      await temporary.write('src/later.ts', 'export const later = true;\n');
      await git(['rm', '--quiet', 'README.md']);
      const moved = await temporary.commitAll('Move main');
      const second = await create('late');
      expect(second.baseCommit).toBe(moved);
      expect(await temporary.read('src/app.ts', second.path)).toBe('export const app = 2;\n');
      expect(await temporary.read('src/later.ts', second.path)).toBe('export const later = true;\n');
      expect(await pathExists(join(second.path, 'README.md'))).toBe(false);
      expect(await git(['status', '--porcelain', '--untracked-files=all'], second.path)).toBe('');
      // The earlier workspace still shows what it was made from.
      expect(await temporary.read('src/app.ts', first.path)).toBe('export const app = 1;\n');
      expect(await git(['status', '--porcelain'], first.path)).toBe('');
    });

    it('gives each workspace its own index and branch: two commit at the same moment', async () => {
      const [left, right] = await Promise.all([create('left'), create('right')]);
      if (left === undefined || right === undefined) throw new Error('two workspaces expected');
      await Promise.all([temporary.write('left.txt', 'left\n', left.path), temporary.write('right.txt', 'right\n', right.path)]);
      const [leftCommit, rightCommit] = await Promise.all([temporary.commitAll('Left', left.path), temporary.commitAll('Right', right.path)]);
      expect((await git(['rev-parse', 'colony/left'])).trim()).toBe(leftCommit);
      expect((await git(['rev-parse', 'colony/right'])).trim()).toBe(rightCommit);
      expect(await git(['show', '--name-only', '--format=', leftCommit])).toBe('left.txt\n');
      expect(await pathExists(join(right.path, 'left.txt'))).toBe(false);
      expect(await git(['status', '--porcelain'])).toBe('');
    });

    it('shows an agent’s edits in git status and in unmergedWork, and only in its own workspace', async () => {
      const workspace = await create('edits');
      const other = await create('other');
      await temporary.write('src/app.ts', 'export const app = 3;\n', workspace.path);
      await temporary.write('notes/plan.txt', 'untracked\n', workspace.path);
      await rm(join(workspace.path, 'README.md'));
      const status = await readStatus(workspace.path, { untracked: true });
      expect(status.ok && status.entries.map((entry) => `${entry.staged}${entry.unstaged} ${entry.path}`).sort()).toEqual([' D README.md', ' M src/app.ts', '?? notes/plan.txt']);
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: expect.arrayContaining(['README.md', 'src/app.ts', 'notes/plan.txt']) });
      await temporary.commitAll('Edits', workspace.path);
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: [], unmergedCommits: 1 });
      expect(await temporary.read('src/app.ts', other.path)).toBe('export const app = 1;\n');
      expect(await temporary.read('README.md', other.path)).toBe('# project\n');
    });

    it('lands its work on the trunk with mergeToMain, then is removed with its branch', async () => {
      const workspace = await create('lands');
      await temporary.write('src/feature.ts', 'export const feature = 1;\n', workspace.path);
      const outcome = await mergeToMain(repo, workspace, { message: 'Add the feature' });
      expect(outcome).toMatchObject({ status: 'landed', files: ['src/feature.ts'] });
      expect(await git(['show', 'main:src/feature.ts'])).toBe('export const feature = 1;\n');
      expect(await unmergedWork(repo, workspace)).toBeNull();
      expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      expect(await git(['branch', '--list', 'colony/*'])).toBe('');
    });

    it('removes everything it made: directory, git’s record, branch; git worktree prune stays quiet', async () => {
      const workspace = await create('gone');
      await temporary.write('scratch.txt', 'uncommitted\n', workspace.path);
      expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      expect(await pathExists(workspace.path)).toBe(false);
      expect(await pathExists(join(repo.gitDir, 'worktrees', 'gone'))).toBe(false);
      expect(await git(['worktree', 'list', '--porcelain'])).not.toContain('gone');
      expect(await git(['branch', '--list', 'colony/gone'])).toBe('');
      expect(await git(['worktree', 'prune', '--verbose', '--dry-run'])).toBe('');
      // Removing again, or a workspace whose directory vanished, is not an error.
      expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      expect(await provider.diskUsage([workspace])).toBe(0);
    });

    it('keeps the branch when not asked to delete it', async () => {
      const workspace = await create('branch-stays');
      expect(await provider.remove(workspace, { deleteBranch: false })).toEqual({ removed: true });
      expect(await pathExists(workspace.path)).toBe(false);
      expect(await git(['branch', '--list', 'colony/branch-stays'])).toContain('colony/branch-stays');
    });

    it('judges the branch against the trunk, not against whatever the user has checked out', async () => {
      const workspace = await create('judged');
      await temporary.write('feature.txt', 'feature\n', workspace.path);
      const commit = await temporary.commitAll('Add feature', workspace.path);
      await git(['switch', '--quiet', '-c', 'elsewhere', commit]);
      expect((await provider.remove(workspace, { deleteBranch: true })).removed).toBe(false);
      expect((await git(['rev-parse', 'refs/heads/colony/judged'])).trim()).toBe(commit);
    });

    it('keeps a branch the trunk lacks commits of, says so, and deletes it only when forced', async () => {
      const workspace = await create('unlanded');
      await temporary.write('feature.txt', 'feature\n', workspace.path);
      const commit = await temporary.commitAll('Add feature', workspace.path);
      // Even with HEAD moved off the branch, the branch is judged.
      await git(['switch', '--quiet', '--detach', 'main'], workspace.path);
      const result = await provider.remove(workspace, { deleteBranch: true });
      expect(result).toEqual({ removed: false, reason: expect.stringMatching(/colony\/unlanded was kept.*1 of its commits/) });
      expect(await pathExists(workspace.path)).toBe(false);
      expect((await git(['rev-parse', 'refs/heads/colony/unlanded'])).trim()).toBe(commit);
      expect(await provider.remove(workspace, { deleteBranch: true, forceDeleteBranch: true })).toEqual({ removed: true });
      expect(await git(['branch', '--list', 'colony/unlanded'])).toBe('');
    });

    it('keeps a workspace whose .git was deleted, files and branch, rather than delete blindly', async () => {
      const workspace = await create('damaged');
      await temporary.write('notes.txt', 'uncommitted work\n', workspace.path);
      await rm(join(workspace.path, '.git'));
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unreadable' });
      const result = await provider.remove(workspace, { deleteBranch: true });
      expect(result).toEqual({ removed: false, reason: expect.stringMatching(/was kept/) });
      expect(await temporary.read('notes.txt', workspace.path)).toBe('uncommitted work\n');
      expect(await git(['branch', '--list', 'colony/damaged'])).toContain('colony/damaged');
    });

    it('keeps a workspace marked kept out of git worktree prune', async () => {
      const workspace = await create('kept');
      expect(await provider.keep(workspace, 'colony kept this workspace: it holds 1 uncommitted file')).toEqual({ locked: true });
      expect(await git(['worktree', 'list', '--porcelain'])).toContain('locked colony kept this workspace: it holds 1 uncommitted file');
      await git(['worktree', 'prune']);
      expect(await pathExists(join(repo.gitDir, 'worktrees', 'kept'))).toBe(true);
    });

    it('shows shared layers at the root, never writes through to them, earlier layers first', async () => {
      const layers = join(temporary.base, 'layers');
      await mkdir(join(layers, 'first', 'node_modules', 'pkg'), { recursive: true });
      await mkdir(join(layers, 'second', 'node_modules', 'pkg'), { recursive: true });
      await writeFile(join(layers, 'first', 'node_modules', 'pkg', 'index.js'), 'first\n');
      await writeFile(join(layers, 'second', 'node_modules', 'pkg', 'index.js'), 'second\n');
      await writeFile(join(layers, 'second', 'node_modules', 'pkg', 'extra.js'), 'extra\n');
      await writeFile(join(layers, 'second', 'node_modules', 'pkg', 'doomed.js'), 'doomed\n');
      const layerDirs = [join(layers, 'first'), join(layers, 'second')];
      const workspace = await create('layered', layerDirs);
      const module = (name: string) => join(workspace.path, 'node_modules', 'pkg', name);
      expect(await readFile(module('index.js'), 'utf8')).toBe('first\n');
      expect(await readFile(module('extra.js'), 'utf8')).toBe('extra\n');
      expect(await git(['status', '--porcelain', '--untracked-files=all'], workspace.path)).toBe('');
      // What a package manager does: delete, add, and replace by renaming a new file in.
      await rm(module('doomed.js'));
      await writeFile(module('added.js'), 'added\n');
      await writeFile(`${module('index.js')}.tmp`, 'replaced\n');
      await rename(`${module('index.js')}.tmp`, module('index.js'));
      expect(await readFile(module('index.js'), 'utf8')).toBe('replaced\n');
      expect(await readFile(join(layers, 'first', 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('first\n');
      expect(await readFile(join(layers, 'second', 'node_modules', 'pkg', 'doomed.js'), 'utf8')).toBe('doomed\n');
      expect(await pathExists(join(layers, 'second', 'node_modules', 'pkg', 'added.js'))).toBe(false);
      const other = await create('layered-too', layerDirs);
      expect(await readFile(join(other.path, 'node_modules', 'pkg', 'doomed.js'), 'utf8')).toBe('doomed\n');
      expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      expect(await readFile(join(layers, 'first', 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('first\n');
    });

    it('adds the layers chosen for the commit it starts from, after those given', async () => {
      const layers = join(temporary.base, 'layers');
      await mkdir(join(layers, 'given', 'node_modules', 'pkg'), { recursive: true });
      await mkdir(join(layers, 'chosen', 'node_modules', 'pkg'), { recursive: true });
      await writeFile(join(layers, 'given', 'node_modules', 'pkg', 'index.js'), 'given\n');
      await writeFile(join(layers, 'chosen', 'node_modules', 'pkg', 'index.js'), 'chosen\n');
      await writeFile(join(layers, 'chosen', 'node_modules', 'pkg', 'only-chosen.js'), 'chosen\n');
      await writeFile(join(temporary.root, 'src', 'app.ts'), 'export const app = 2;\n');
      const moved = await temporary.commitAll('Move the trunk');
      const askedFor: string[] = [];
      const workspace = await provider.create({
        id: 'chosen',
        parentDir,
        sharedLayers: [join(layers, 'given')],
        layersFor: (commit) => {
          askedFor.push(commit);
          return Promise.resolve([join(layers, 'chosen')]);
        },
      });
      expect(askedFor).toEqual([moved]);
      expect(workspace.baseCommit).toBe(moved);
      expect(await readFile(join(workspace.path, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('given\n');
      expect(await readFile(join(workspace.path, 'node_modules', 'pkg', 'only-chosen.js'), 'utf8')).toBe('chosen\n');
      await expect(provider.create({ id: 'refused', parentDir, layersFor: () => Promise.resolve([join(layers, 'missing')]) })).rejects.toThrow(/missing does not exist/);
    });

    it('creates and removes twenty workspaces at once', async () => {
      const ids = Array.from({ length: 20 }, (_, index) => `crowd-${index}`);
      const workspaces = await Promise.all(ids.map((id) => create(id)));
      expect(new Set(workspaces.map((workspace) => workspace.path)).size).toBe(20);
      const listed = await git(['worktree', 'list', '--porcelain']);
      for (const workspace of workspaces) expect(listed).toContain(`worktree ${workspace.path}\n`);
      const statuses = await Promise.all(workspaces.map((workspace) => git(['status', '--porcelain'], workspace.path)));
      expect(statuses.every((status) => status === '')).toBe(true);
      const results = await Promise.all(workspaces.map((workspace) => provider.remove(workspace, { deleteBranch: true })));
      expect(results).toEqual(workspaces.map(() => ({ removed: true })));
      expect(await git(['worktree', 'list', '--porcelain'])).not.toContain('crowd-');
      expect(await git(['branch', '--list', 'colony/*'])).toBe('');
    });

    it('refuses a malformed id, and an id whose branch exists, leaving nothing behind', async () => {
      await expect(create('../escape')).rejects.toThrow(/workspace id/);
      await expect(create('x.lock')).rejects.toThrow(/workspace id/);
      await git(['branch', 'colony/taken']);
      await expect(create('taken')).rejects.toThrow(/already exists/);
      expect(await pathExists(join(parentDir, 'taken'))).toBe(false);
      expect(await pathExists(join(repo.gitDir, 'worktrees', 'taken'))).toBe(false);
      expect(await git(['worktree', 'list', '--porcelain'])).not.toContain('taken');
    });

    it('finds the workspaces an earlier process left, readable again with their uncommitted work', async () => {
      const workspace = await create('left-behind');
      await temporary.write('unsaved.txt', 'not committed\n', workspace.path);
      const later = open(repo, storageDir);
      const found = await later.find(parentDir);
      expect(found.problems).toEqual([]);
      expect(found.workspaces).toEqual([{ ...workspace, baseCommit: expect.any(String) }]);
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: ['unsaved.txt'] });
      expect(await later.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      expect((await later.find(parentDir)).workspaces).toEqual([]);
    });

    it('leaves no shared files behind once closed with no workspace left', async () => {
      const workspaces = await Promise.all([create('one'), create('two')]);
      for (const workspace of workspaces) expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
      await provider.close();
      expect(await filesUnder(storageDir)).toEqual([]);
      // A provider that closed still works: the next workspace makes what it needs again.
      const again = await create('again');
      expect(await git(['status', '--porcelain'], again.path)).toBe('');
    });

    it('measures the disk a workspace’s own files take', async () => {
      const workspace = await create('measured');
      const before = await provider.diskUsage([workspace]);
      await temporary.write('big.bin', 'x'.repeat(1 << 20), workspace.path);
      const after = await provider.diskUsage([workspace]);
      expect(after - before).toBeGreaterThanOrEqual(1 << 20);
      expect(await provider.diskUsage([workspace, workspace])).toBe(after);
    });
  });
}
