import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { resolveModel } from '../../model/registry.js';
import { SIM_MODEL_FACTORY } from '../../sim/sim-model-factory.js';
import { createOverlayProvider } from '../../workspace/providers/overlay/overlay-provider.js';
import { readOverlayMounts, unmountOverlaysUnder } from '../../workspace/providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { pathExists } from '../../workspace/files/path-exists.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { acquireRunLock, type RunLock } from './run-lock.js';
import { overlayStorageDirOf, stateLockPath, workspacesDirOf } from './state-directory.js';
import { runWorkSession } from '../session/work-session.js';
import { sweepWorkspaces } from './workspace-sweep.js';
import { describeRuns } from '../../../test/testing/runs-need-sandbox.js';

const overlay = await probeOverlaySupport(tmpdir());

describe('sweepWorkspaces', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let stateDir: string;
  let lock: RunLock;
  let events: EventBody[];

  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n' });
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

  const bothProviders = () => [createWorktreeProvider(repo), createOverlayProvider(repo, { storageDir: overlayStorageDirOf(stateDir) })];
  const sweep = (providers = bothProviders(), keep?: ReadonlySet<string>) =>
    sweepWorkspaces({ repo, stateDir, lock, workspacesDir: workspacesDirOf(stateDir), providers, record: (event) => events.push(event), ...(keep === undefined ? {} : { keep }) });
  const sweepKeeping = (keep: ReadonlySet<string>) => sweep(bothProviders(), keep);

  it('reclaims a dead run’s worktrees: clean ones removed, unlanded work salvaged, unreadable ones kept', async () => {
    const dead = createWorktreeProvider(repo);
    const parentDir = workspacesDirOf(stateDir);
    const [clean, unsaved, damaged] = await Promise.all(['clean', 'unsaved', 'damaged'].map((id) => dead.create({ id, parentDir })));
    if (clean === undefined || unsaved === undefined || damaged === undefined) throw new Error('three workspaces expected');
    await temporary.write('draft.txt', 'half done\n', unsaved.path);
    await rm(join(damaged.path, '.git'));

    const report = await sweep();
    expect({ ...report, removed: [...report.removed].sort() }).toEqual({
      removed: [clean.path, unsaved.path].sort(),
      salvaged: [unsaved.path],
      kept: [{ path: damaged.path, reason: expect.stringMatching(/damaged\/\.git is missing/) }],
      deleted: [],
      problems: [],
    });
    expect(events.filter((event) => event.type === 'workspace.salvaged')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'workspace.removed')).toHaveLength(3);
    expect(events.at(-1)?.type).toBe('workspace.swept');
    // The salvaged work is kept under colony's own refs; of the branches, only the kept workspace's stays.
    expect(await temporary.git(['show', 'refs/colony/salvaged/unsaved:draft.txt'])).toBe('half done\n');
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('+ colony/damaged\n');
    expect(await pathExists(unsaved.path)).toBe(false);
    expect(await temporary.read('draft.txt', unsaved.path).catch(() => 'gone')).toBe('gone');
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).toContain(`worktree ${damaged.path}\n`);
  });

  it('drops git’s record of a worktree whose directory is gone, keeping a branch with unlanded commits', async () => {
    const workspace = await createWorktreeProvider(repo).create({ id: 'vanished', parentDir: workspacesDirOf(stateDir) });
    await temporary.write('feature.txt', 'feature\n', workspace.path);
    const commit = await temporary.commitAll('Feature', workspace.path);
    await rm(workspace.path, { recursive: true, force: true });
    expect(await sweep()).toMatchObject({ removed: [workspace.path], kept: [] });
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).not.toContain('vanished');
    expect((await temporary.git(['rev-parse', 'colony/vanished'])).trim()).toBe(commit);
  });

  it('leaves the workspaces a resumed run gives back exactly as they are', async () => {
    const dead = createWorktreeProvider(repo);
    const parentDir = workspacesDirOf(stateDir);
    const resumed = await dead.create({ id: 'resumed', parentDir });
    const finished = await dead.create({ id: 'finished', parentDir });
    await temporary.write('draft.txt', 'half done\n', resumed.path);
    await temporary.write('draft.txt', 'abandoned\n', finished.path);

    const report = await sweepKeeping(new Set(['resumed']));
    expect(report).toEqual({ removed: [finished.path], salvaged: [finished.path], kept: [], deleted: [], problems: [] });
    expect(await temporary.read('draft.txt', resumed.path)).toBe('half done\n');
    expect(await temporary.git(['status', '--porcelain'], resumed.path)).toBe('?? draft.txt\n');
    expect(await temporary.git(['worktree', 'list', '--porcelain'])).toContain(`worktree ${resumed.path}\n`);
    expect(await temporary.git(['branch', '--list', 'colony/resumed'])).toContain('colony/resumed');
    expect(events.filter((event) => event.type === 'workspace.removed').map((event) => event.data.path)).toEqual([finished.path]);
  });

  it.runIf(overlay.ok)('leaves a resumed run’s overlay, and the base it stands on, in place', async () => {
    const storageDir = overlayStorageDirOf(stateDir);
    const resumed = await createOverlayProvider(repo, { storageDir }).create({ id: 'resumed', parentDir: workspacesDirOf(stateDir) });
    await temporary.write('draft.txt', 'half done\n', resumed.path);
    const bases = await readdir(join(storageDir, 'bases'));

    expect(await sweepKeeping(new Set(['resumed']))).toEqual({ removed: [], salvaged: [], kept: [], deleted: [], problems: [] });
    expect(events).toEqual([]);
    expect(await temporary.read('draft.txt', resumed.path)).toBe('half done\n');
    expect((await readOverlayMounts()).map((mount) => mount.mountPoint)).toContain(resumed.path);
    expect(await readdir(join(storageDir, 'bases'))).toEqual(bases);
    expect(await readdir(join(storageDir, 'layers'))).toEqual(['resumed']);
  });

  it('records nothing when there is nothing to sweep', async () => {
    expect(await sweep()).toEqual({ removed: [], salvaged: [], kept: [], deleted: [], problems: [] });
    expect(events).toEqual([]);
  });

  it('refuses to run without the state directory’s run lock held', async () => {
    lock.release();
    await expect(sweep()).rejects.toThrow(/needs the run lock/);
    const other = acquireRunLock(join(temporary.base, 'elsewhere.lock'), 'elsewhere');
    if (!other.ok) throw new Error(other.error);
    lock = other.lock;
    await expect(sweep()).rejects.toThrow(/needs the run lock/);
  });

  it.runIf(overlay.ok)('unmounts a dead run’s overlays, salvages their work, and deletes bases nothing uses', async () => {
    const storageDir = overlayStorageDirOf(stateDir);
    const dead = createOverlayProvider(repo, { storageDir });
    const parentDir = workspacesDirOf(stateDir);
    const unsaved = await dead.create({ id: 'unsaved', parentDir });
    const clean = await dead.create({ id: 'clean', parentDir });
    await temporary.write('draft.txt', 'half done\n', unsaved.path);
    await mkdir(join(storageDir, 'bases', `.partial-${'0'.repeat(40)}-dead`), { recursive: true });

    const report = await sweep();
    expect({ ...report, removed: [...report.removed].sort() }).toMatchObject({ removed: [unsaved.path, clean.path].sort(), salvaged: [unsaved.path], kept: [], problems: [] });
    expect(report.deleted).toHaveLength(2);
    expect((await readOverlayMounts()).filter((mount) => mount.mountPoint.startsWith(stateDir))).toEqual([]);
    expect(await readdir(join(storageDir, 'bases'))).toEqual([]);
    expect(await readdir(join(storageDir, 'layers'))).toEqual([]);
    expect(await temporary.git(['show', 'refs/colony/salvaged/unsaved:draft.txt'])).toBe('half done\n');
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('');
    expect(await temporary.git(['worktree', 'prune', '--dry-run', '--verbose'])).toBe('');
  });
});

describeRuns('a live run’s workspaces', () => {
  it('are never swept: a second session is refused before it looks at them', async () => {
    const temporary = await createTemporaryRepository({ 'README.md': '# project\n' });
    const stateDir = join(await realpath(temporary.base), 'state');
    await mkdir(stateDir);
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    const workspace = await createWorktreeProvider(opened.repo).create({ id: 'live', parentDir: workspacesDirOf(stateDir) });
    await temporary.write('in-progress.txt', 'the live run is writing this\n', workspace.path);
    const holder = holdLockInAnotherProcess(stateLockPath(stateDir));
    try {
      await holder.held;
      const task = join(temporary.base, 'task.md');
      await writeFile(task, '# A task\n\nDo something.\n');
      const model = resolveModel('sim', { env: {} }, { sim: SIM_MODEL_FACTORY });
      if (!model.ok) throw new Error(model.error);
      const result = await runWorkSession({ repoDir: temporary.root, taskPath: task, model: model.model, stateDir, maxSteps: 5 });
      expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/another colony run .* is working on the state directory/) });
      expect(await temporary.read('in-progress.txt', workspace.path)).toBe('the live run is writing this\n');
      expect(await temporary.git(['worktree', 'list', '--porcelain'])).toContain(`worktree ${workspace.path}\n`);
    } finally {
      const exited = once(holder.child, 'exit');
      holder.child.kill('SIGKILL');
      await exited;
      await temporary.remove();
    }
  });
});

/** Another process holding a run lock the way colony does, until killed. */
function holdLockInAnotherProcess(path: string) {
  const source = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(path)}, { timeout: 0 });
    db.exec('BEGIN IMMEDIATE');
    require('fs').writeFileSync(${JSON.stringify(`${path}.json`)}, JSON.stringify({ pid: process.pid, since: 'just now' }));
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  const held = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { child, held };
}
