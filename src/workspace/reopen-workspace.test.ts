import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeToMain } from './merge/merge-to-main.js';
import { createOverlayProvider } from './providers/overlay/overlay-provider.js';
import { readOverlayMounts, unmountOverlay, unmountOverlaysUnder } from './providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from './providers/overlay/overlay-probe.js';
import { pathExists } from './files/path-exists.js';
import { clearStaleRefLocks, reopenWorkspace } from './reopen-workspace.js';
import { closeRepositoryObjects } from './git/repository-objects.js';
import { openRepository, type Repository } from './git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from './testing/temporary-repository.js';
import type { Workspace } from './workspace.js';
import type { WorkspaceProvider } from './workspace-provider.js';
import { createWorktreeProvider } from './providers/worktree/worktree-provider.js';

const overlay = await probeOverlaySupport(tmpdir());

/** A live process holding `path` open (a shell redirection, then `sleep`), as a git writing it would. */
async function holdOpen(path: string): Promise<ChildProcess> {
  const child = spawn('sh', ['-c', 'exec 3<>"$1" && echo held && exec sleep 1000', 'sh', path], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A lock file whose holder was killed while holding it, as a SIGKILL leaves git's. */
async function leaveBehind(path: string): Promise<void> {
  await kill(await holdOpen(path));
}

/** A git process at work in `cwd` with no lock file open: an idle `cat-file --batch` waiting for input. */
async function gitAtWork(cwd: string): Promise<ChildProcess> {
  const child = spawn('git', ['cat-file', '--batch'], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin?.write('HEAD\n');
  if (child.stdout !== null) await once(child.stdout, 'data');
  return child;
}

interface Method {
  readonly name: string;
  readonly enabled: boolean;
  open(repo: Repository, storageDir: string): WorkspaceProvider;
  /** What a reboot or a killed process does to the workspace's mount. */
  restart(workspace: Workspace): Promise<void>;
  /** Loses the workspace's files for good. */
  destroy(workspace: Workspace, storageDir: string): Promise<void>;
}

const methods: Method[] = [
  {
    name: 'worktree',
    enabled: true,
    open: (repo) => createWorktreeProvider(repo),
    restart: async () => undefined,
    destroy: (workspace) => rm(workspace.path, { recursive: true, force: true }),
  },
  {
    name: 'overlay',
    enabled: overlay.ok,
    open: (repo, storageDir) => createOverlayProvider(repo, { storageDir }),
    restart: async (workspace) => {
      const unmounted = await unmountOverlay(workspace.path);
      if (!unmounted.ok) throw new Error(unmounted.error);
    },
    destroy: async (workspace, storageDir) => {
      await unmountOverlay(workspace.path);
      await rm(join(storageDir, 'layers', workspace.id, 'upper'), { recursive: true, force: true });
    },
  },
];

describe.each(methods.filter((method) => method.enabled))('reopenWorkspace ($name)', (method) => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let storageDir: string;
  let parentDir: string;
  let workspace: Workspace;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'config.ts': 'export const retries = 3;\n' });
    await chmod(temporary.base, 0o755);
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    const base = await realpath(temporary.base);
    storageDir = join(base, 'storage');
    parentDir = join(base, 'workspaces');
    workspace = await method.open(repo, storageDir).create({ id: 'agent-1', parentDir });
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(kill));
    await closeRepositoryObjects(repo);
    await unmountOverlaysUnder(await realpath(temporary.base));
    await temporary.remove();
  });

  const reopen = () => reopenWorkspace(method.open(repo, storageDir), parentDir, 'agent-1');

  it('gives the workspace back with its uncommitted work, clearing only the locks nobody holds', async () => {
    await temporary.write('draft.txt', 'half done\n', workspace.path);
    await temporary.write('config.ts', 'export const retries = 5;\n', workspace.path);
    const index = join(workspace.gitDir, 'index.lock');
    const head = join(workspace.gitDir, 'HEAD.lock');
    await leaveBehind(index);
    children.push(await holdOpen(head));
    await method.restart(workspace);

    const reopened = await reopen();
    expect(reopened).toEqual({ ok: true, workspace: { ...workspace, baseCommit: expect.any(String) }, clearedLocks: [index] });
    expect(await pathExists(head)).toBe(true);
    expect(await temporary.read('draft.txt', workspace.path)).toBe('half done\n');
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe(' M config.ts\n?? draft.txt\n');
    if (method.name === 'overlay') expect((await readOverlayMounts()).map((mount) => mount.mountPoint)).toContain(workspace.path);

    await Promise.all(children.splice(0).map(kill));
    expect(await reopen()).toMatchObject({ ok: true, clearedLocks: [head] });
    const landed = await mergeToMain(repo, workspace, { message: 'Five retries and a draft' });
    expect(landed).toMatchObject({ status: 'landed', files: ['config.ts', 'draft.txt'] });
  });

  it('leaves a rebase stopped at a conflict as it is, for the next merge to continue', async () => {
    const other = await method.open(repo, storageDir).create({ id: 'agent-2', parentDir });
    await temporary.write('config.ts', 'export const retries = 7;\n', other.path);
    expect(await mergeToMain(repo, other, { message: 'Seven' })).toMatchObject({ status: 'landed' });
    await temporary.write('config.ts', 'export const retries = 5;\n', workspace.path);
    expect(await mergeToMain(repo, workspace, { message: 'Five' })).toMatchObject({ status: 'conflicted', files: ['config.ts'] });
    await leaveBehind(join(workspace.gitDir, 'index.lock'));
    await method.restart(workspace);

    expect(await reopen()).toMatchObject({ ok: true, clearedLocks: [join(workspace.gitDir, 'index.lock')] });
    expect(await pathExists(join(workspace.gitDir, 'rebase-merge'))).toBe(true);
    expect(await temporary.read('config.ts', workspace.path)).toMatch(/^<<<<<<< /m);
    await temporary.write('config.ts', 'export const retries = 6;\n', workspace.path);
    expect(await mergeToMain(repo, workspace, { message: 'unused' })).toMatchObject({ status: 'landed' });
    expect(await temporary.git(['show', 'main:config.ts'])).toBe('export const retries = 6;\n');
  });

  it('keeps the locks while a git is at work in the workspace, even one that holds none open', async () => {
    const index = join(workspace.gitDir, 'index.lock');
    await writeFile(index, '');
    const git = await gitAtWork(workspace.path);
    children.push(git);
    expect(await reopen()).toMatchObject({ ok: true, clearedLocks: [] });
    expect(await pathExists(index)).toBe(true);
    await kill(git);
    expect(await reopen()).toMatchObject({ ok: true, clearedLocks: [index] });
  });

  it('says why when the workspace’s files are gone, or it never existed', async () => {
    await method.destroy(workspace, storageDir);
    const gone = await reopen();
    expect(gone).toEqual({ ok: false, error: expect.stringMatching(/^The workspace agent-1 cannot be reopened: .*(is gone|lost its upper layer)/) });
    expect(await reopenWorkspace(method.open(repo, storageDir), parentDir, 'nobody')).toEqual({
      ok: false,
      error: expect.stringMatching(/^The workspace nobody cannot be reopened: .* know of a workspace nobody under /),
    });
  });
});

describe('clearStaleRefLocks', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n' });
    await chmod(temporary.base, 0o755);
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(kill));
    await closeRepositoryObjects(repo);
    await temporary.remove();
  });

  it('removes the trunk’s lock a killed update-ref left, after which merges land again', async () => {
    const workspace = await createWorktreeProvider(repo).create({ id: 'w1', parentDir: join(await realpath(temporary.base), 'workspaces') });
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    const mainLock = join(repo.gitDir, 'refs', 'heads', 'main.lock');
    await leaveBehind(mainLock);
    expect(await mergeToMain(repo, workspace, { message: 'Mine', maxAttempts: 2 })).toMatchObject({ status: 'failed' });
    // colony's own git processes for merging work in the checkout and would keep every lock.
    await closeRepositoryObjects(repo);

    expect(await clearStaleRefLocks(repo)).toEqual([mainLock]);
    expect(await mergeToMain(repo, workspace, { message: 'Mine' })).toMatchObject({ status: 'landed', files: ['mine.txt'] });
  });

  it('removes branch, packed-refs and index locks nobody holds, and keeps one a live process holds', async () => {
    const branchLock = join(repo.gitDir, 'refs', 'heads', 'colony', 'w1.lock');
    await mkdir(join(repo.gitDir, 'refs', 'heads', 'colony'), { recursive: true });
    const packedLock = join(repo.gitDir, 'packed-refs.lock');
    const indexLock = join(repo.gitDir, 'index.lock');
    await leaveBehind(branchLock);
    await leaveBehind(indexLock);
    children.push(await holdOpen(packedLock));

    expect((await clearStaleRefLocks(repo)).sort()).toEqual([indexLock, branchLock].sort());
    expect(await pathExists(packedLock)).toBe(true);
    expect(await clearStaleRefLocks(repo)).toEqual([]);
    await Promise.all(children.splice(0).map(kill));
    expect(await clearStaleRefLocks(repo)).toEqual([packedLock]);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
  });

  it('keeps every lock while a git is at work in the checkout or in one of its worktrees', async () => {
    const workspace = await createWorktreeProvider(repo).create({ id: 'w1', parentDir: join(await realpath(temporary.base), 'workspaces') });
    const branchLock = join(repo.gitDir, 'refs', 'heads', 'colony', 'w1.lock');
    await writeFile(branchLock, '');
    for (const place of [repo.root, workspace.path]) {
      const git = await gitAtWork(place);
      children.push(git);
      expect(await clearStaleRefLocks(repo)).toEqual([]);
      await kill(git);
    }
    expect(await clearStaleRefLocks(repo)).toEqual([branchLock]);
  });
});
