import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createOverlayProvider } from '../../workspace/providers/overlay/overlay-provider.js';
import { unmountOverlaysUnder } from '../../workspace/providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { acquireRunLock, type RunLock } from './run-lock.js';
import { cleanLeftovers, overlayMountsUnder, spillFilesDirOf } from './state-clean.js';
import { overlayStorageDirOf, stateLockPath, viewsDirOf, workspacesDirOf } from './state-directory.js';

const overlay = await probeOverlaySupport(tmpdir());

describe('cleanLeftovers', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let stateDir: string;
  let lock: RunLock;
  let events: EventBody[];

  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    stateDir = join(await realpath(temporary.base), 'state');
    await mkdir(stateDir);
    const taken = acquireRunLock(stateLockPath(stateDir), 'the state directory');
    if (!taken.ok) throw new Error(taken.error);
    lock = taken.lock;
    events = [];
  });
  afterEach(async () => {
    lock.release();
    await unmountOverlaysUnder(await realpath(temporary.base));
    await temporary.remove();
  });

  const clean = (keepResumable: boolean) => cleanLeftovers({ repo, stateDir, lock, keepResumable, record: (event) => events.push(event) });

  /** What a run that died left: a worker's workspace with a file it never committed, its spill file, and a planner's view. */
  async function leaveRunBehind(provider = createWorktreeProvider(repo)) {
    const workspace = await provider.create({ id: 'worker-a', parentDir: workspacesDirOf(stateDir) });
    await writeFile(join(workspace.path, 'unsaved.txt'), 'work in progress\n');
    const spill = join(spillFilesDirOf(stateDir), 'worker-a', 'output-1.txt');
    await mkdir(join(spill, '..'), { recursive: true });
    await writeFile(spill, 'x'.repeat(20_000));
    const view = join(viewsDirOf(stateDir), 'planner-b');
    await temporary.git(['worktree', 'add', '--quiet', '--detach', view]);
    return { workspace, spill, view };
  }

  it('removes what an ended run left, its unlanded work salvaged first, and counts it', async () => {
    const { workspace, spill, view } = await leaveRunBehind();
    const tally = await clean(false);
    expect(tally).toMatchObject({ mounts: 0, workspaces: 1, worktreeRecords: 2, kept: [], problems: [] });
    expect(tally.bytes).toBeGreaterThan(20_000);
    for (const path of [workspace.path, spill, view]) expect(await pathExists(path)).toBe(false);
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain(stateDir);
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('');
    expect(await temporary.git(['log', '--format=%s', '-1', 'refs/colony/salvaged/worker-a'])).toContain('salvaged the uncommitted work of workspace worker-a');
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['workspace.salvaged', 'workspace.removed', 'workspace.swept']));
  });

  it('keeps what a resumable run needs: its workspaces and spill files; views and records of vanished worktrees go', async () => {
    const { workspace, spill, view } = await leaveRunBehind();
    const gone = join(workspacesDirOf(stateDir), 'worker-gone');
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'colony/worker-gone', gone]);
    await rm(gone, { recursive: true });
    const tally = await clean(true);
    expect(tally).toMatchObject({ workspaces: 0, worktreeRecords: 2, problems: [] });
    expect(await pathExists(join(workspace.path, 'unsaved.txt'))).toBe(true);
    expect(await pathExists(spill)).toBe(true);
    expect(await pathExists(view)).toBe(false);
    const listed = await temporary.git(['worktree', 'list', '--porcelain']);
    expect(listed).toContain(workspace.path);
    expect(listed).not.toContain(gone);
    expect(await temporary.git(['branch', '--list', '--format=%(refname:short)', 'colony/*'])).toBe('colony/worker-a\n');
  });

  it('finds nothing to free the second time', async () => {
    await leaveRunBehind();
    await clean(false);
    expect(await clean(false)).toEqual({ mounts: 0, workspaces: 0, worktreeRecords: 0, bytes: 0, kept: [], problems: [] });
  });

  it.skipIf(!overlay.ok)('unmounts an overlay workspace and deletes the base it stood on', async () => {
    const { workspace } = await leaveRunBehind(createOverlayProvider(repo, { storageDir: overlayStorageDirOf(stateDir) }));
    expect(await overlayMountsUnder(stateDir)).toBe(1);
    const tally = await clean(false);
    expect(tally).toMatchObject({ mounts: 1, workspaces: 1, problems: [] });
    expect(await overlayMountsUnder(stateDir)).toBe(0);
    expect(await pathExists(workspace.path)).toBe(false);
    expect(await pathExists(join(overlayStorageDirOf(stateDir), 'bases', workspace.baseCommit))).toBe(false);
  });
});
