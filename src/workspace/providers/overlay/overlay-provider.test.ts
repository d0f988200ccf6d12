import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOverlayProvider } from './overlay-provider.js';
import { parseMountInfo, readOverlayMounts, unmountOverlay, unmountOverlaysUnder } from './overlay-mount.js';
import { probeOverlaySupport } from './overlay-probe.js';
import { pathExists } from '../../files/path-exists.js';
import { openRepository, type Repository } from '../../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../testing/temporary-repository.js';
import { describeWorkspaceProviderConformance } from '../../testing/workspace-provider.conformance.js';
import type { WorkspaceProvider } from '../../workspace-provider.js';
import { unmergedWork } from '../../workspace-status.js';

const support = await probeOverlaySupport(tmpdir());

describe('parseMountInfo', () => {
  it('reads mount points (unescaping spaces), types and the filesystem’s own options', () => {
    const text = [
      '26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
      '812 26 0:90 / /tmp/a\\040b/w1 rw,relatime shared:5 - overlay overlay rw,lowerdir=/b/tree,upperdir=/l/upper,workdir=/l/work,redirect_dir=on',
      'garbage',
    ].join('\n');
    expect(parseMountInfo(text)).toEqual([
      { mountPoint: '/', fsType: 'ext4', superOptions: 'rw,discard' },
      { mountPoint: '/tmp/a b/w1', fsType: 'overlay', superOptions: 'rw,lowerdir=/b/tree,upperdir=/l/upper,workdir=/l/work,redirect_dir=on' },
    ]);
  });
});

describe.runIf(support.ok)('overlay workspaces (mounting works here)', () => {
  describeWorkspaceProviderConformance('overlay', (repo, storageDir) => createOverlayProvider(repo, { storageDir }));

  describe('what only overlays do', () => {
    let temporary: TemporaryRepository;
    let repo: Repository;
    let storageDir: string;
    let parentDir: string;
    let provider: WorkspaceProvider;
    const files: Record<string, string> = { 'README.md': '# project\n' };
    for (let index = 0; index < 50; index += 1) files[`src/module-${index}.ts`] = `export const value${index} = ${index};\n`;

    beforeEach(async () => {
      temporary = await createTemporaryRepository(files);
      const opened = await openRepository(temporary.root);
      if (!opened.ok) throw new Error(opened.error);
      repo = opened.repo;
      const base = await realpath(temporary.base);
      storageDir = join(base, 'storage');
      parentDir = join(base, 'workspaces');
      provider = createOverlayProvider(repo, { storageDir, refreshFromFiles: 2, reuseUpToFiles: 10 });
    });
    afterEach(async () => {
      await unmountOverlaysUnder(await realpath(temporary.base));
      await temporary.remove();
    });

    const bases = async () => (await readdir(join(storageDir, 'bases'))).filter((name) => !name.startsWith('.')).sort();
    const upper = (id: string) => join(storageDir, 'layers', id, 'upper');

    it('shares one base checkout; a workspace’s upper layer holds only what changed', async () => {
      const [first, second] = await Promise.all([provider.create({ id: 'first', parentDir }), provider.create({ id: 'second', parentDir })]);
      if (first === undefined || second === undefined) throw new Error('two workspaces expected');
      expect(await bases()).toEqual([first.baseCommit]);
      expect(await readdir(upper('first'))).toEqual(['.git']);
      await writeFile(join(first.path, 'src', 'module-3.ts'), 'export const value3 = 33;\n');
      expect((await readdir(upper('first'), { recursive: true })).sort()).toEqual(['.git', 'src', 'src/module-3.ts']);
      expect(await readFile(join(storageDir, 'bases', first.baseCommit, 'tree', 'src', 'module-3.ts'), 'utf8')).toBe('export const value3 = 3;\n');
      expect(await readFile(join(second.path, 'src', 'module-3.ts'), 'utf8')).toBe('export const value3 = 3;\n');
    });

    it('links the base’s index, which git status leaves alone: the lower files’ stat data holds', async () => {
      const workspace = await provider.create({ id: 'indexed', parentDir });
      const index = join(repo.gitDir, 'worktrees', 'indexed', 'index');
      expect((await stat(index)).nlink).toBe(2);
      expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('');
      // Had git found the index stale it would have written its own, breaking the link.
      expect((await stat(index)).nlink).toBe(2);
      expect(await temporary.git(['ls-files', '--debug', 'README.md'], workspace.path)).toMatch(/size: 10\b/);
    });

    it('brings a workspace on an older base forward, copying up only the files that changed', async () => {
      const early = await provider.create({ id: 'early', parentDir });
      await temporary.write('src/module-7.ts', 'export const value7 = 70;\n');
      const moved = await temporary.commitAll('Change one module');
      const late = await provider.create({ id: 'late', parentDir });
      expect(late.baseCommit).toBe(moved);
      expect(await bases()).toEqual([early.baseCommit]);
      expect((await readdir(upper('late'), { recursive: true })).sort()).toEqual(['.git', 'src', 'src/module-7.ts']);
      expect(await temporary.git(['status', '--porcelain'], late.path)).toBe('');
    });

    it('makes a new base once the trunk moved far, and deletes the old one when nothing stands on it', async () => {
      const early = await provider.create({ id: 'early', parentDir });
      for (let index = 0; index < 20; index += 1) await temporary.write(`src/module-${index}.ts`, `export const value${index} = -1;\n`);
      const far = await temporary.commitAll('Change twenty modules');
      const late = await provider.create({ id: 'late', parentDir });
      expect(await bases()).toEqual([early.baseCommit, far].sort());
      expect(await readdir(upper('late'))).toEqual(['.git']);
      expect(await provider.prune()).toEqual([]);
      expect(await provider.remove(early, { deleteBranch: true })).toEqual({ removed: true });
      expect(await bases()).toEqual([far]);
      expect(await readFile(join(late.path, 'src', 'module-0.ts'), 'utf8')).toBe('export const value0 = -1;\n');
    });

    it('never writes a shared layer, even when a file is written in place', async () => {
      const layer = join(temporary.base, 'layer');
      await mkdir(join(layer, 'node_modules', 'pkg'), { recursive: true });
      await writeFile(join(layer, 'node_modules', 'pkg', 'index.js'), 'shared\n');
      const workspace = await provider.create({ id: 'writer', parentDir, sharedLayers: [layer] });
      await writeFile(join(workspace.path, 'node_modules', 'pkg', 'index.js'), 'changed in place\n', { flag: 'r+' });
      expect(await readFile(join(layer, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('shared\n');
      expect(await readFile(join(upper('writer'), 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('changed in place\n');
    });

    it('swaps a shared layer under a workspace, keeping what the agent wrote, and mounts the new one after a reboot', async () => {
      const layerWith = async (name: string, version: string) => {
        const layer = join(temporary.base, name);
        await mkdir(join(layer, 'node_modules', 'pkg'), { recursive: true });
        await writeFile(join(layer, 'node_modules', 'pkg', 'index.js'), `${version}\n`);
        return layer;
      };
      const [first, second] = [await layerWith('first', 'one'), await layerWith('second', 'two')];
      const workspace = await provider.create({ id: 'swapped', parentDir, sharedLayers: [first] });
      await temporary.write('work.txt', 'the agent wrote this\n', workspace.path);
      expect(await provider.replaceSharedLayer?.(workspace, first, second)).toEqual({ ok: true });
      expect(await readFile(join(workspace.path, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('two\n');
      expect(await temporary.read('work.txt', workspace.path)).toBe('the agent wrote this\n');
      expect(await provider.replaceSharedLayer?.(workspace, first, second)).toEqual({ ok: false, error: `${first} is not a layer of the overlay workspace swapped` });

      expect(await unmountOverlay(workspace.path)).toEqual({ ok: true });
      await createOverlayProvider(repo, { storageDir }).find(parentDir);
      expect(await readFile(join(workspace.path, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('two\n');
    });

    it('mounts a workspace again after its mount went away (a reboot), its work intact', async () => {
      const workspace = await provider.create({ id: 'rebooted', parentDir });
      await temporary.write('unsaved.txt', 'not committed\n', workspace.path);
      expect(await unmountOverlay(workspace.path)).toEqual({ ok: true });
      expect(await pathExists(join(workspace.path, 'unsaved.txt'))).toBe(false);
      const found = await createOverlayProvider(repo, { storageDir }).find(parentDir);
      expect(found).toEqual({ workspaces: [expect.objectContaining({ id: 'rebooted', path: workspace.path })], problems: [] });
      expect(await temporary.read('unsaved.txt', workspace.path)).toBe('not committed\n');
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: ['unsaved.txt'] });
    });

    it('removes a workspace a process still sits in, without waiting for it', async () => {
      const workspace = await provider.create({ id: 'busy', parentDir });
      const sitter = spawn('sleep', ['30'], { cwd: workspace.path, stdio: 'ignore' });
      try {
        expect(await provider.remove(workspace, { deleteBranch: true })).toEqual({ removed: true });
        expect((await readOverlayMounts()).some((mount) => mount.mountPoint === workspace.path)).toBe(false);
        expect(await pathExists(join(storageDir, 'layers', 'busy'))).toBe(false);
      } finally {
        const exited = once(sitter, 'exit');
        sitter.kill('SIGKILL');
        await exited;
      }
    });
  });
});
