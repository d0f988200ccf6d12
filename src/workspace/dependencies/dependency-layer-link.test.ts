import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDependencyLayer } from './dependency-cache.js';
import { gitIgnoresLayer, linkDependencyLayer, unlinkDependencyLayer } from './dependency-layer-link.js';
import { liveUsers, readLayerEntries } from './dependency-layer-records.js';
import { openRepository } from '../git/repository.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import { createNodeProject, npm, type NodeProject } from '../testing/node-project.js';
import type { Workspace } from '../workspace.js';
import { createWorktreeProvider } from '../providers/worktree/worktree-provider.js';

const execFileAsync = promisify(execFile);

const TIMEOUT_MS = 120_000;

/** One project and its layer for the whole file; every test makes its own workspaces. */
let shared: { project: NodeProject; layerDir: string };
let workspaceCount = 0;

async function preparedProject(options: { readonly ignoreNodeModules?: boolean } = {}): Promise<{ project: NodeProject; layerDir: string }> {
  const project = await createNodeProject(options);
  const layer = await prepareDependencyLayer(project.repo, { cacheDir: project.cacheDir, commit: project.commit });
  if (!layer.ok) throw new Error(layer.error);
  return { project, layerDir: layer.layerDir };
}

beforeAll(async () => {
  shared = await preparedProject();
}, TIMEOUT_MS);

afterAll(async () => {
  await shared.project.remove();
});

function newWorkspace(project: NodeProject): Promise<Workspace> {
  workspaceCount += 1;
  return createWorktreeProvider(project.repo).create({ id: `w${workspaceCount}`, parentDir: project.workspacesDir });
}

async function requireX(cwd: string): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, ['-e', "process.stdout.write(require('x'))"], { cwd });
  return stdout;
}

describe('linkDependencyLayer', { timeout: TIMEOUT_MS }, () => {
  it('links the layer into a workspace, where require finds the dependency and git sees nothing new', async () => {
    const { project, layerDir } = shared;
    const workspace = await newWorkspace(project);
    const linked = await linkDependencyLayer(workspace.path, layerDir);
    expect(linked).toEqual({ ok: true, entries: ['node_modules'], files: expect.any(Number) });

    expect(await requireX(workspace.path)).toBe('x 1.0.0');
    const inLayer = await stat(join(layerDir, 'node_modules/x/index.js'));
    const inWorkspace = await stat(join(workspace.path, 'node_modules/x/index.js'));
    expect(inWorkspace.ino).toBe(inLayer.ino);
    expect(inWorkspace.nlink).toBeGreaterThanOrEqual(2);
    expect(await project.temporary.git(['status', '--porcelain', '--untracked-files=all'], workspace.path)).toBe('');
    expect(await liveUsers(layerDir)).toContain(workspace.path);
  });

  it('refuses a workspace whose repository does not ignore node_modules, and changes nothing', async () => {
    const { project, layerDir } = await preparedProject({ ignoreNodeModules: false });
    try {
      const workspace = await newWorkspace(project);
      const linked = await linkDependencyLayer(workspace.path, layerDir);
      expect(linked).toEqual({ ok: false, error: expect.stringMatching(/node_modules is not ignored .*git add --all/) });
      await expect(stat(join(workspace.path, 'node_modules'))).rejects.toThrow(/ENOENT/);
      expect(await liveUsers(layerDir)).toEqual([]);
    } finally {
      await project.remove();
    }
  });

  it('refuses a workspace that already has node_modules', async () => {
    const { project, layerDir } = shared;
    const workspace = await newWorkspace(project);
    await mkdir(join(workspace.path, 'node_modules'));
    const linked = await linkDependencyLayer(workspace.path, layerDir);
    expect(linked).toEqual({ ok: false, error: expect.stringMatching(/already has node_modules/) });
  });

  it('leaves the layer untouched when a worker installs other dependencies in its workspace', async () => {
    const { project, layerDir } = shared;
    const workspace = await newWorkspace(project);
    const linked = await linkDependencyLayer(workspace.path, layerDir);
    expect(linked.ok).toBe(true);
    const hiddenLockfile = await readFile(join(layerDir, 'node_modules/.package-lock.json'), 'utf8');

    // The worker packs a new version of x and installs it with npm, in its own workspace.
    const source = join(project.temporary.base, `x-2-${workspace.id}`);
    await mkdir(source);
    await writeFile(join(source, 'package.json'), JSON.stringify({ name: 'x', version: '2.0.0', main: 'index.js' }));
    await writeFile(join(source, 'index.js'), 'module.exports = "x 2.0.0";\n');
    await npm(['pack', '--silent', '--pack-destination', join(workspace.path, 'deps')], source);
    await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', './deps/x-2.0.0.tgz'], workspace.path);

    expect(await requireX(workspace.path)).toBe('x 2.0.0');
    expect(await readFile(join(layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
    expect(await readFile(join(layerDir, 'node_modules/.package-lock.json'), 'utf8')).toBe(hiddenLockfile);
    // The layer still matches its seal: the next run reuses it.
    const again = await prepareDependencyLayer(project.repo, { cacheDir: project.cacheDir, commit: project.commit });
    expect(again).toMatchObject({ ok: true, reused: true, layerDir });
  });

  it('links one layer into many workspaces that share its files', async () => {
    const { project, layerDir } = shared;
    const linksBefore = (await stat(join(layerDir, 'node_modules/x/index.js'))).nlink;
    const paths: string[] = [];
    for (let count = 0; count < 3; count += 1) {
      const workspace = await newWorkspace(project);
      expect((await linkDependencyLayer(workspace.path, layerDir)).ok).toBe(true);
      expect(await requireX(workspace.path)).toBe('x 1.0.0');
      paths.push(workspace.path);
    }
    expect((await stat(join(layerDir, 'node_modules/x/index.js'))).nlink).toBe(linksBefore + 3);
    expect(await liveUsers(layerDir)).toEqual(expect.arrayContaining(paths));
  });
});

describe("a monorepo's layer", { timeout: TIMEOUT_MS }, () => {
  it("puts each package's own node_modules at its place, its links pointing into the workspace, and takes them all away again", async () => {
    // npm workspaces without a lockfile; util needs a version of is-number the root does not, so
    // npm installs it into packages/util/node_modules.
    const temporary = await createTemporaryRepository({
      '.gitignore': 'node_modules/\n',
      'package.json': JSON.stringify({ name: 'mono', private: true, workspaces: ['packages/*'], dependencies: { 'is-number': '7.0.0' } }),
      'packages/util/package.json': JSON.stringify({ name: '@demo/util', version: '1.0.0', main: 'index.js', dependencies: { 'is-number': '6.0.0' } }),
      'packages/util/index.js': "module.exports = require('is-number/package.json').version;\n",
    });
    try {
      const opened = await openRepository(temporary.root);
      if (!opened.ok) throw new Error(opened.error);
      const commit = (await temporary.git(['rev-parse', 'HEAD'])).trim();
      const cacheDir = join(temporary.base, 'layers');
      const layer = await prepareDependencyLayer(opened.repo, { cacheDir, commit });
      if (!layer.ok) throw new Error(layer.error);
      expect(await readLayerEntries(layer.layerDir)).toEqual([
        { path: 'node_modules', directory: true },
        { path: 'packages/util/node_modules', directory: true },
      ]);
      const workspace = await createWorktreeProvider(opened.repo).create({ id: 'mono', parentDir: join(temporary.base, 'workspaces') });
      expect(await gitIgnoresLayer(workspace.path, layer.layerDir)).toBe(true);
      expect(await linkDependencyLayer(workspace.path, layer.layerDir)).toMatchObject({ ok: true, entries: ['node_modules', 'packages/util/node_modules'] });

      const versions = "process.stdout.write(require('is-number/package.json').version + ' ' + require('@demo/util'))";
      const { stdout } = await execFileAsync(process.execPath, ['-e', versions], { cwd: workspace.path });
      expect(stdout).toBe('7.0.0 6.0.0');
      // The package's link is the workspace's own folder, where an agent's edit shows at once.
      expect(await realpath(join(workspace.path, 'node_modules/@demo/util'))).toBe(await realpath(join(workspace.path, 'packages/util')));
      expect(await temporary.git(['status', '--porcelain', '--untracked-files=all'], workspace.path)).toBe('');

      await unlinkDependencyLayer(workspace.path, layer.layerDir);
      expect(existsSync(join(workspace.path, 'node_modules'))).toBe(false);
      expect(existsSync(join(workspace.path, 'packages/util/node_modules'))).toBe(false);
      expect(existsSync(join(workspace.path, 'packages/util/index.js'))).toBe(true);
    } finally {
      await temporary.remove();
    }
  });
});
