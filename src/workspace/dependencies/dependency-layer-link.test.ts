import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDependencyLayer } from './dependency-cache.js';
import { linkDependencyLayer } from './dependency-layer-link.js';
import { liveUsers } from './dependency-layer-records.js';
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
