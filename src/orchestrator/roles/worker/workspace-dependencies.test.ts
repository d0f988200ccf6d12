import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventBody } from '../../../events/event-types.js';
import { runInstallCommand } from '../../../workspace/dependencies/npm-install.js';
import { createWorktreeProvider } from '../../../workspace/providers/worktree/worktree-provider.js';
import { createNodeProject, npm, type NodeProject } from '../../../workspace/testing/node-project.js';
import { linkSharedDependencies, prepareSharedDependencies } from '../../setup/shared-dependencies.js';
import { followWorkspaceDependencies } from './workspace-dependencies.js';

const execFileAsync = promisify(execFile);

const TIMEOUT_MS = 120_000;

let project: NodeProject;

beforeAll(async () => {
  project = await createNodeProject();
}, TIMEOUT_MS);

afterAll(async () => {
  await project.remove();
});

async function requireX(cwd: string): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, ['-e', "process.stdout.write(require('x'))"], { cwd });
  return stdout;
}

/** Packs `x` at `version` into the workspace's deps/ and depends on it there, as an agent with npm would (no network: a local tarball). */
async function dependOnLocalX(dir: string, version: string, lock: boolean): Promise<void> {
  const source = join(dirname(dir), `x-source-${version}`);
  await mkdir(source, { recursive: true });
  await writeFile(join(source, 'package.json'), JSON.stringify({ name: 'x', version, main: 'index.js' }));
  await writeFile(join(source, 'index.js'), `module.exports = ${JSON.stringify(`x ${version}`)};\n`);
  await npm(['pack', '--silent', '--pack-destination', join(dir, 'deps')], source);
  const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ ...manifest, dependencies: { x: `file:./deps/x-${version}.tgz` } }, null, 2)}\n`);
  if (lock) await npm(['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
}

describe("a worker's workspace whose package.json changes", { timeout: TIMEOUT_MS }, () => {
  it("gets the layer of its own files before the agent's next command, and is told when there is none for them", async () => {
    const events: EventBody[] = [];
    const record = (body: EventBody) => events.push(body);
    const shared = await prepareSharedDependencies({ repo: project.repo, commit: project.commit, stateDir: dirname(project.cacheDir), enabled: true, setup: null, record, runInstall: runInstallCommand });
    if (!shared.ok || shared.layerDir === null) throw new Error('expected a layer');
    const provider = createWorktreeProvider(project.repo);
    const workspace = await provider.create({ id: 'follows', parentDir: project.workspacesDir });
    expect(await linkSharedDependencies(workspace.path, shared.layerDir, record)).toBe(true);
    const dependencies = followWorkspaceDependencies({ workspace, layers: shared.layers, provider, layer: { layerDir: shared.layerDir, stacked: false }, fresh: true, record });
    await dependencies.start();

    // Nothing that decides the layer changed: nothing happens.
    await writeFile(join(workspace.path, 'notes.md'), 'an unrelated file\n');
    expect(await dependencies.beforeCommand()).toBeNull();
    expect(await requireX(workspace.path)).toBe('x 1.0.0');

    await dependOnLocalX(workspace.path, '2.0.0', true);
    const told = await dependencies.beforeCommand();
    expect(told).toMatch(/^colony set up the dependencies your changes to package-lock\.json, package\.json ask for in your workspace \(\d+\.\d s\)/);
    expect(await requireX(workspace.path)).toBe('x 2.0.0');
    expect(events.filter((event) => event.type === 'dependencies.linked').at(-1)).toMatchObject({ data: { path: workspace.path, changed: ['package-lock.json', 'package.json'] } });
    // The next command, with nothing changed since, installs nothing more.
    const installs = events.filter((event) => event.type === 'dependencies.prepared').length;
    expect(await dependencies.beforeCommand()).toBeNull();

    // A package.json the lockfile does not match: npm ci fails, the agent hears why, and its workspace keeps what it had.
    await dependOnLocalX(workspace.path, '3.0.0', false);
    const third = await dependencies.beforeCommand();
    expect(third).toMatch(/^colony could not set up the dependencies your changes to package\.json ask for, so your commands still run with the ones you had: npm could not install the dependencies of [0-9a-f]{12}: npm ci /);
    expect(await requireX(workspace.path)).toBe('x 2.0.0');
    expect(events.filter((event) => event.type === 'dependencies.prepared')).toHaveLength(installs);
    expect(await project.temporary.git(['status', '--porcelain'], workspace.path)).not.toMatch(/node_modules/);
  });
});
