import { execFileSync } from 'node:child_process';
import { cp, readFile, realpath } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareDependencyLayer } from '../src/workspace/dependencies/dependency-cache.js';
import { linkDependencyLayer } from '../src/workspace/dependencies/dependency-layer-link.js';
import { installEnvironment, NPM_CI_COMMAND, runInstallCommand } from '../src/workspace/dependencies/npm-install.js';
import { openRepository, type Repository } from '../src/workspace/git/repository.js';
import { createTemporaryRepository } from '../src/workspace/testing/temporary-repository.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { createWorktreeProvider } from '../src/workspace/providers/worktree/worktree-provider.js';
import type { BenchRow } from './bench-row.js';

const COLONY_ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = 1024 * 1024;

/**
 * Disk and time per workspace for a real Node project (colony's own package.json and
 * package-lock.json), with and without the shared dependency layer, at 1 and 10 workspaces.
 * Disk is `du -sk` over the whole set at once, so a file hard-linked into many workspaces
 * counts once, as it costs once.
 */
export async function benchDependencyLayers(): Promise<BenchRow[]> {
  const files = {
    'package.json': await readFile(join(COLONY_ROOT, 'package.json'), 'utf8'),
    'package-lock.json': await readFile(join(COLONY_ROOT, 'package-lock.json'), 'utf8'),
    '.gitignore': 'node_modules/\n',
  };
  const temporary = await createTemporaryRepository(files);
  try {
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    const repo = opened.repo;
    const base = await realpath(temporary.base);
    const commit = (await temporary.git(['rev-parse', 'HEAD'])).trim();
    const cacheDir = join(base, 'dependency-layers');

    process.stdout.write('  installing the layer (npm ci)…\n');
    const installStarted = performance.now();
    const layer = await prepareDependencyLayer(repo, { cacheDir, commit });
    const installMs = performance.now() - installStarted;
    if (!layer.ok) throw new Error(`cannot prepare the layer: ${layer.error}`);
    const reuseStarted = performance.now();
    const reused = await prepareDependencyLayer(repo, { cacheDir, commit });
    const reuseMs = performance.now() - reuseStarted;
    if (!reused.ok || !reused.reused) throw new Error('the second preparation did not reuse the layer');
    const layerKb = diskKb([layer.layerDir]);
    const fileCount = Number(execFileSync('find', [layer.layerDir, '-type', 'f'], { encoding: 'utf8', maxBuffer: 64 * MB }).trim().split('\n').length);

    const rows: BenchRow[] = [
      {
        name: 'layer: npm ci once (colony’s own lockfile)',
        value: installMs / 1000,
        unit: 's',
        note: `npm ${npmVersion()}, npm cache warm, load average ${loadavg()[0]?.toFixed(1) ?? '?'} at the start; ${fileCount.toLocaleString('en-US')} files, ${(layer.bytes / MB).toFixed(0)} MB of file contents, ${(layerKb / 1024).toFixed(0)} MB on disk`,
      },
      { name: 'layer: reuse at a run’s start (verify against its seal)', value: reuseMs, unit: 'ms', note: 'reads package.json and the lockfile from git, stats every file of the layer' },
    ];

    for (const count of [1, 10]) {
      process.stdout.write(`  ${count} workspace(s) with the layer…\n`);
      const linked = await makeWorkspaces(repo, join(base, `with-${count}`), count);
      const linkMs: number[] = [];
      for (const workspace of linked) {
        const started = performance.now();
        const result = await linkDependencyLayer(workspace.path, layer.layerDir);
        linkMs.push(performance.now() - started);
        if (!result.ok) throw new Error(result.error);
      }
      const withKb = diskKb([layer.layerDir, ...linked.map((workspace) => workspace.path)]);
      const removeMs = await removeAll(repo, linked);

      process.stdout.write(`  ${count} workspace(s) with their own node_modules…\n`);
      const own = await makeWorkspaces(repo, join(base, `without-${count}`), count);
      let ciMs: number | null = null;
      for (const [index, workspace] of own.entries()) {
        if (count === 1 && index === 0) {
          const started = performance.now();
          const installed = await runInstallCommand({ dir: workspace.path, command: NPM_CI_COMMAND, environment: installEnvironment(process.env), timeoutMs: 20 * 60_000, registriesOnly: true });
          ciMs = performance.now() - started;
          if (!installed.ok) throw new Error(installed.error);
        } else {
          await cp(join(layer.layerDir, 'node_modules'), join(workspace.path, 'node_modules'), { recursive: true, verbatimSymlinks: true });
        }
      }
      const withoutKb = diskKb(own.map((workspace) => workspace.path));
      const removeOwnMs = await removeAll(repo, own);

      const how = count === 1 ? '`npm ci` in the workspace' : 'a full copy of node_modules per workspace (what `npm ci` in each would write)';
      rows.push(
        { name: `${count} workspace(s), own node_modules: disk`, value: withoutKb / 1024, unit: 'MB', note: `${how}; du -sk over the set` },
        { name: `${count} workspace(s), shared layer: disk`, value: withKb / 1024, unit: 'MB', note: 'the layer once plus every workspace (hard links counted once); du -sk over the set' },
        { name: `${count} workspace(s): disk saved by the shared layer`, value: (100 * (withoutKb - withKb)) / withoutKb, unit: '%' },
        { name: `${count} workspace(s), shared layer: disk per workspace beyond the layer`, value: (withKb - layerKb) / 1024 / count, unit: 'MB', note: 'its own directories and checked-out files; the files under node_modules cost nothing more' },
        { name: `${count} workspace(s), shared layer: time to link one`, value: mean(linkMs), unit: 'ms', note: `mean of ${count}; hard links for every file, fresh directories, the hidden lockfile copied` },
        { name: `${count} workspace(s), shared layer: time to remove one`, value: removeMs / count, unit: 'ms', note: 'git worktree remove, node_modules links included' },
        { name: `${count} workspace(s), own node_modules: time to remove one`, value: removeOwnMs / count, unit: 'ms', note: 'git worktree remove, node_modules included' },
      );
      if (ciMs !== null) rows.push({ name: '1 workspace, own node_modules: time to install', value: ciMs / 1000, unit: 's', note: 'npm ci --ignore-scripts in the workspace, npm cache warm' });
    }
    return rows;
  } finally {
    await temporary.remove();
  }
}

async function makeWorkspaces(repo: Repository, parentDir: string, count: number): Promise<Workspace[]> {
  const workspaces: Workspace[] = [];
  for (let index = 0; index < count; index += 1) workspaces.push(await createWorktreeProvider(repo).create({ id: `bench-${index}-${Date.now()}`, parentDir }));
  return workspaces;
}

async function removeAll(repo: Repository, workspaces: readonly Workspace[]): Promise<number> {
  const started = performance.now();
  for (const workspace of workspaces) {
    const removed = await createWorktreeProvider(repo).remove(workspace, { deleteBranch: true, forceDeleteBranch: true });
    if (!removed.removed) throw new Error(removed.reason);
  }
  return performance.now() - started;
}

/** Disk used by `paths` together, in KiB; GNU du counts a file hard-linked under several of them once. */
function diskKb(paths: readonly string[]): number {
  const output = execFileSync('du', ['-skc', ...paths], { encoding: 'utf8' });
  const total = output.trim().split('\n').at(-1) ?? '';
  return Number(total.split('\t')[0]);
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
}

function npmVersion(): string {
  return execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
}
