import { mkdir, readFile, realpath, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DamagedStoreError } from '../../store/sqlite/damaged-store-error.js';
import { openSqliteEventStore } from '../../store/sqlite/sqlite-event-store.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import { excludeFromGit, openRepository, type Repository } from '../../workspace/git/repository.js';
import { createOverlayProvider } from '../../workspace/providers/overlay/overlay-provider.js';
import { unmountOverlaysUnder } from '../../workspace/providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { freeAsideName, moveDamagedStateAside, storeDamage } from './damaged-state.js';
import { overlayMountsUnder } from './state-clean.js';
import { eventsDatabasePath, overlayStorageDirOf, workspacesDirOf } from './state-directory.js';

const overlay = await probeOverlaySupport(tmpdir());

describe('freeAsideName', () => {
  it('is <state>.damaged, then numbered when taken', () => {
    expect(freeAsideName('/r/.colony', () => false)).toBe('/r/.colony.damaged');
    const taken = new Set(['/r/.colony.damaged', '/r/.colony.damaged-2']);
    expect(freeAsideName('/r/.colony', (path) => taken.has(path))).toBe('/r/.colony.damaged-3');
  });
});

describe('a damaged state directory', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let stateDir: string;

  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    // Inside the repository, as the default state directory is, and kept out of git as a run keeps it.
    stateDir = join(await realpath(temporary.root), '.state');
    await mkdir(stateDir);
    await excludeFromGit(repo, '/.state/');
  });
  afterEach(async () => {
    await unmountOverlaysUnder(await realpath(temporary.base));
    await temporary.remove();
  });

  async function damageStore(): Promise<void> {
    const store = openSqliteEventStore(eventsDatabasePath(stateDir));
    for (let n = 1; n <= 200; n += 1) store.append({ type: 'run.started', runId: `run-${n}`, agentId: 'system', data: { mode: 'run', repo: 'r', model: 'sim', title: 'x'.repeat(100) } });
    await store.close();
    await truncate(eventsDatabasePath(stateDir), 1_000);
  }

  it('is told from a sound store and from none', async () => {
    expect(await storeDamage(stateDir)).toBeNull();
    await openSqliteEventStore(eventsDatabasePath(stateDir)).close();
    expect(await storeDamage(stateDir)).toBeNull();
    await damageStore();
    expect(await storeDamage(stateDir)).toBeInstanceOf(DamagedStoreError);
  });

  it('is moved aside whole, its worktree records gone, the commits of its workspaces kept under salvage refs, out of git status', async () => {
    await damageStore();
    const workspace = await createWorktreeProvider(repo).create({ id: 'worker-a', parentDir: workspacesDirOf(stateDir) });
    await writeFile(join(workspace.path, 'work.txt'), 'done\n');
    await temporary.git(['add', 'work.txt'], workspace.path);
    await temporary.git(['commit', '--quiet', '-m', 'work of worker-a'], workspace.path);
    const moved = await moveDamagedStateAside(repo, stateDir);
    expect(moved).toEqual({ ok: true, movedTo: `${stateDir}.damaged`, mounts: 0, worktreeRecords: 1, salvaged: ['refs/colony/salvaged/worker-a'], problems: [] });
    expect(await pathExists(stateDir)).toBe(false);
    expect(await readFile(join(`${stateDir}.damaged`, 'workspaces', 'worker-a', 'work.txt'), 'utf8')).toBe('done\n');
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('worker-a');
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('');
    expect(await temporary.git(['log', '--format=%s', '-1', 'refs/colony/salvaged/worker-a'])).toBe('work of worker-a\n');
    expect(await temporary.git(['status', '--porcelain'])).toBe('');

    // A second damaged state directory in the same place takes the next free name, out of git status too.
    await mkdir(stateDir);
    await damageStore();
    expect(await moveDamagedStateAside(repo, stateDir)).toMatchObject({ ok: true, movedTo: `${stateDir}.damaged-2` });
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
  });

  it.skipIf(!overlay.ok)('takes its overlay mounts down before it moves', async () => {
    await damageStore();
    const provider = createOverlayProvider(repo, { storageDir: overlayStorageDirOf(stateDir) });
    const workspace = await provider.create({ id: 'worker-b', parentDir: workspacesDirOf(stateDir) });
    await writeFile(join(workspace.path, 'unsaved.txt'), 'kept in the upper layer\n');
    expect(await overlayMountsUnder(stateDir)).toBe(1);
    const moved = await moveDamagedStateAside(repo, stateDir);
    expect(moved).toMatchObject({ ok: true, mounts: 1, worktreeRecords: 1 });
    expect(await overlayMountsUnder(`${stateDir}.damaged`)).toBe(0);
    expect(await readFile(join(overlayStorageDirOf(`${stateDir}.damaged`), 'layers', 'worker-b', 'upper', 'unsaved.txt'), 'utf8')).toBe('kept in the upper layer\n');
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('worker-b');
  });
});
