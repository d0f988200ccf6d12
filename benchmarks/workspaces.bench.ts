import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { measureDiskUsage } from '../src/workspace/files/disk-usage.js';
import { describeFailure, runGit } from '../src/workspace/git/git.js';
import { createOverlayProvider } from '../src/workspace/providers/overlay/overlay-provider.js';
import { unmountOverlaysUnder } from '../src/workspace/providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from '../src/workspace/providers/overlay/overlay-probe.js';
import { openRepository, type Repository } from '../src/workspace/git/repository.js';
import { measureWorkspaces } from '../src/bench/workspaces/workspace-benchmark.js';
import type { WorkspaceProvider } from '../src/workspace/workspace-provider.js';
import { createWorktreeProvider } from '../src/workspace/providers/worktree/worktree-provider.js';
import type { BenchRow } from './bench-row.js';
import { generateManyFileRepository } from './generated-repository.js';

/**
 * Ways to give each agent its own copy of a repository, side by side on one real repository:
 * `COLONY_BENCH_REPO=<a checkout or git directory>` (cloned to a scratch directory first; never
 * touched), or a generated 20,000-file repository when it is not set. For each method and each
 * count in `COLONY_BENCH_WORKSPACE_COUNTS` (default 1,10,100): wall time per workspace, made one
 * after another, and the real disk each adds (allocated blocks, every file once, hard links
 * included, git's records and indexes included), then the first `git status` in one.
 */

const run = promisify(execFile);
const MB = 2 ** 20;

interface Figures {
  readonly msPerWorkspace: number;
  readonly bytesPerWorkspace: number;
  readonly statusMs: number;
  readonly note?: string;
}

interface Method {
  readonly name: string;
  /** Makes `count` workspaces under `dir` and measures them; removes them again. */
  measure(count: number, dir: string): Promise<Figures>;
}

async function git(cwd: string, args: readonly string[]): Promise<string> {
  const result = await runGit(cwd, args);
  if (result.code !== 0) throw new Error(describeFailure(args, result));
  return result.stdout;
}

async function timeStatus(path: string): Promise<number> {
  const started = performance.now();
  await git(path, ['status', '--porcelain']);
  return performance.now() - started;
}

/** A method that makes each workspace with one command and whose disk is everything under `dir`. */
function commandMethod(name: string, make: (path: string) => Promise<void>, alreadyCounted: readonly string[] = [], note?: string): Method {
  return {
    name,
    async measure(count, dir) {
      await mkdir(dir, { recursive: true });
      const before = await measureDiskUsage([dir], { alreadyCounted });
      const started = performance.now();
      for (let index = 0; index < count; index += 1) await make(join(dir, `w${index}`));
      const msPerWorkspace = (performance.now() - started) / count;
      const after = await measureDiskUsage([dir], { alreadyCounted });
      const statusMs = await timeStatus(join(dir, 'w0'));
      await rm(dir, { recursive: true, force: true });
      return { msPerWorkspace, bytesPerWorkspace: (after - before) / count, statusMs, ...(note === undefined ? {} : { note }) };
    },
  };
}

/** colony's own provider, through the same measurement `colony bench workspaces` makes. */
function providerMethod(name: string, repo: Repository, open: (storageDir: string) => WorkspaceProvider): Method {
  return {
    name,
    async measure(count, dir) {
      const storageDir = join(dir, 'storage');
      const provider = open(storageDir);
      try {
        const measured = await measureWorkspaces(repo, provider, {
          count,
          parentDir: join(dir, 'workspaces'),
          storageDir,
          idPrefix: `bench-${count}`,
          status: async (workspace) => {
            await git(workspace.path, ['status', '--porcelain']);
          },
        });
        const shared = measured.sharedBytes > 0 ? `; shared base checkout ${(measured.sharedBytes / MB).toFixed(0)} MB made once in ${(measured.sharedMs / 1000).toFixed(1)} s, not included` : '';
        return { msPerWorkspace: measured.msPerWorkspace, bytesPerWorkspace: measured.bytesPerWorkspace, statusMs: measured.firstStatusMs, note: `git's record and index included${shared}` };
      } finally {
        await unmountOverlaysUnder(dir);
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Overlay workspaces made all at once, as many workers starting together would. */
function concurrentOverlay(repo: Repository): Method {
  return {
    name: 'overlay (colony), all at once',
    async measure(count, dir) {
      const storageDir = join(dir, 'storage');
      const provider = createOverlayProvider(repo, { storageDir });
      try {
        await provider.prepare();
        const started = performance.now();
        const made = await Promise.all(Array.from({ length: count }, (_, index) => provider.create({ id: `together-${index}`, parentDir: join(dir, 'workspaces') })));
        const msPerWorkspace = (performance.now() - started) / count;
        const first = made[0];
        const statusMs = first === undefined ? 0 : await timeStatus(first.path);
        for (const workspace of made) await provider.remove(workspace, { deleteBranch: true, forceDeleteBranch: true });
        await provider.close();
        return { msPerWorkspace, bytesPerWorkspace: Number.NaN, statusMs, note: 'wall time of all creations together over their number' };
      } finally {
        await unmountOverlaysUnder(dir);
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

async function prepareSource(scratch: string): Promise<{ source: string; origin: string }> {
  const given = process.env.COLONY_BENCH_REPO;
  const origin = given === undefined || given === '' ? await generateManyFileRepository(join(scratch, 'generated'), 20_000) : given;
  const source = join(scratch, 'source');
  await git(scratch, ['clone', '--quiet', origin, source]);
  return { source, origin: given === undefined || given === '' ? 'a generated repository' : given };
}

export async function benchWorkspaces(): Promise<BenchRow[]> {
  const scratch = await realpath(await mkdtemp(join(tmpdir(), 'colony-bench-workspaces-')));
  try {
    const { source, origin } = await prepareSource(scratch);
    const opened = await openRepository(source);
    if (!opened.ok) throw new Error(opened.error);
    const repo = opened.repo;
    const files = (await git(source, ['ls-files', '-z'])).split('\0').filter((path) => path !== '').length;
    const base = join(scratch, 'checkout-to-link');
    await git(source, ['worktree', 'add', '--quiet', '--detach', base, 'HEAD']);
    const overlay = await probeOverlaySupport(scratch);
    const methods: Method[] = [
      commandMethod('full clone (git clone --no-hardlinks)', (path) => git(scratch, ['clone', '--quiet', '--no-hardlinks', source, path]).then(() => undefined)),
      commandMethod('git clone --shared', (path) => git(scratch, ['clone', '--quiet', '--shared', source, path]).then(() => undefined)),
      commandMethod('git clone --reference (over file://)', (path) => git(scratch, ['clone', '--quiet', '--reference', source, `file://${source}`, path]).then(() => undefined)),
      providerMethod('git worktree add (colony worktree)', repo, () => createWorktreeProvider(repo)),
      commandMethod(
        'cp -al of a checkout',
        (path) => run('cp', ['-al', base, path]).then(() => undefined),
        [base],
        'files only: it has no index or HEAD of its own yet, and a write in place would change every copy',
      ),
      ...(overlay.ok ? [providerMethod('overlay (colony)', repo, (storageDir) => createOverlayProvider(repo, { storageDir })), concurrentOverlay(repo)] : []),
    ];
    const counts = (process.env.COLONY_BENCH_WORKSPACE_COUNTS ?? '1,10,100').split(',').map(Number).filter((count) => count > 0);
    const free = await statfs(scratch);
    const diskBudget = Math.min(free.bavail * free.bsize * 0.25, 40 * 2 ** 30);
    const rows: BenchRow[] = [];
    const perWorkspace = new Map<string, Figures>();
    process.stdout.write(`  ${origin}: ${files.toLocaleString('en-US')} files; overlay ${overlay.ok ? 'available' : `not available (${overlay.error})`}\n`);
    for (const count of counts) {
      for (const method of methods) {
        const label = `${method.name}, ${count} workspace${count === 1 ? '' : 's'}`;
        const earlier = perWorkspace.get(method.name);
        if (earlier !== undefined && Number.isFinite(earlier.bytesPerWorkspace) && earlier.bytesPerWorkspace * count > diskBudget) {
          rows.push({ name: `${label}: not run`, value: (earlier.bytesPerWorkspace * count) / 2 ** 30, unit: 'GB it would write', note: `over the ${(diskBudget / 2 ** 30).toFixed(0)} GB this benchmark allows itself` });
          continue;
        }
        process.stdout.write(`  ${label}…\n`);
        const figures = await method.measure(count, join(scratch, 'runs', `${method.name.replace(/\W+/g, '-')}-${count}`));
        perWorkspace.set(method.name, figures);
        const colony = method.name.startsWith('overlay (colony)');
        rows.push({
          name: `${label}: time per workspace`,
          value: figures.msPerWorkspace,
          unit: 'ms',
          ...(colony ? { target: '< 100 ms' } : {}),
          note: `first git status ${figures.statusMs.toFixed(0)} ms${figures.note === undefined ? '' : `; ${figures.note}`}`,
        });
        if (Number.isFinite(figures.bytesPerWorkspace)) {
          rows.push({ name: `${label}: disk per workspace`, value: figures.bytesPerWorkspace / MB, unit: 'MB', ...(colony ? { target: '< 5 MB' } : {}) });
        }
      }
    }
    const full = perWorkspace.get(methods[0]?.name ?? '');
    const layered = perWorkspace.get('overlay (colony)');
    if (full !== undefined && layered !== undefined && layered.bytesPerWorkspace > 0) {
      rows.push({ name: 'full clone over overlay: disk per workspace', value: full.bytesPerWorkspace / layered.bytesPerWorkspace, unit: '×', target: '≥ 10×', note: `at the largest count both ran; ${origin}, ${files.toLocaleString('en-US')} files` });
    }
    return rows;
  } finally {
    await unmountOverlaysUnder(scratch);
    await rm(scratch, { recursive: true, force: true });
  }
}
