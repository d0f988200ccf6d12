import { withdrawSharedWrite } from '../files/group-access.js';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, posix, resolve } from 'node:path';
import { readDependencyInputs } from './dependency-inputs.js';
import { writeInputFiles, type DependencyInputs, type SetupPlan } from './input-files.js';
import { discard, measureTree, readSeal, sameSeal, sealTree, STAGING_DIR, touchLastUsed, writeLayerEntries, writeSeal, type LayerEntry } from './dependency-layer-records.js';
import { installEnvironment, runInstallCommand, type RunInstall } from './npm-install.js';
import { readSetupCommandInputs, type SetupCommand } from './setup-command-inputs.js';
import { isDirectory, pathExists } from '../files/path-exists.js';
import type { Repository } from '../git/repository.js';
import { errorMessage } from '../../errors/error-message.js';

export interface PrepareDependencyLayerOptions {
  /**
   * Where layers are kept, one folder per key. Keep it on the file system of the workspaces:
   * hard links cannot cross file systems.
   */
  readonly cacheDir: string;
  /** The commit whose package.json and lockfile are installed; read from git, not from a checkout. */
  readonly commit: string;
  /** The project's own setup, which takes the place of the npm install; null or absent for npm's. */
  readonly setup?: SetupCommand | null;
  /** Runs the install, unconfined (`runInstallCommand`) when not given. */
  readonly runInstall?: RunInstall;
  /** Told just before an install starts, so a caller can say what runs; not called when a layer is reused. */
  readonly onInstall?: (plan: SetupPlan) => void;
  readonly signal?: AbortSignal;
  /** How long the install may take; 10 minutes when not given. */
  readonly timeoutMs?: number;
  /** The environment the install's allow-list is read from; `process.env` when not given. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
}

/**
 * A prepared layer, or why there is none. `layerDir` holds `node_modules/`, or what a project's
 * own setup made; `reused` says the layer existed already (or another caller made it meanwhile)
 * and no install ran for this call; `bytes` is the size of the files in it. A failure with
 * `stopsRun` is one the run must not go on without (the install failed, the user's setup is
 * wrong); without it, colony has no install for the repository and workers do without.
 */
export type DependencyLayer =
  | { readonly ok: true; readonly layerDir: string; readonly key: string; readonly reused: boolean; readonly bytes: number; readonly plan: SetupPlan }
  | { readonly ok: false; readonly error: string; readonly stopsRun: boolean };

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Installs in progress in this process, by layer folder: a second caller waits for the first. */
const inProgress = new Map<string, Promise<DependencyLayer>>();

/**
 * Makes sure the dependencies of the repository's root npm package at `options.commit` (or
 * what the project's own `setup` makes) are installed once in `<cacheDir>/<key>/`, and says
 * where. The key covers package.json, the lockfile, `.npmrc`, node's major version and the
 * platform (for a `setup`: the command and every input file), so a layer is reused exactly
 * when an install would produce the same tree.
 *
 * The install (`npm ci --ignore-scripts --no-audit --no-fund`, `npm install` with the same
 * flags for a package without a lockfile, or the `setup` command, with an allow-listed
 * environment and a timeout) runs in a private staging folder holding only the install's
 * inputs, and its result appears under the key with one rename, so no caller ever sees half
 * a layer. Two processes installing the same key both install; the first rename wins and the
 * other uses the winner's layer. Callers in one process share one install.
 *
 * Never throws: a repository colony has no install for comes back as `{ ok: false }` that does
 * not stop the run; a failed install (with the tail of its output), wrong setup inputs or a
 * full disk come back as `{ ok: false, stopsRun: true }`.
 */
export async function prepareDependencyLayer(repo: Repository, options: PrepareDependencyLayerOptions): Promise<DependencyLayer> {
  if (options.signal?.aborted === true) return { ok: false, error: 'the preparation was cancelled', stopsRun: true };
  const inputs = await readLayerInputs(repo, options.commit, options.setup ?? null);
  if (!inputs.ok) return inputs;
  const cacheDir = resolve(options.cacheDir);
  const layerDir = join(cacheDir, inputs.key);
  const running = inProgress.get(layerDir);
  if (running !== undefined) return running.then((layer) => (layer.ok ? { ...layer, reused: true } : layer));
  const preparing = ensureLayer(repo, cacheDir, inputs, options).finally(() => inProgress.delete(layerDir));
  inProgress.set(layerDir, preparing);
  return preparing;
}

/**
 * What a layer for `commit` is made from, and its key: npm's, pnpm's or yarn's inputs, or the
 * project's own `setup` and its input files. Read from git; installs nothing. Two commits with
 * the same key share one layer.
 */
export async function readLayerInputs(repo: Repository, commit: string, setup: SetupCommand | null): Promise<DependencyInputs> {
  return setup === null ? readDependencyInputs(repo, commit) : readSetupCommandInputs(repo, commit, setup);
}

async function ensureLayer(
  repo: Repository,
  cacheDir: string,
  { key, files, plan }: Extract<DependencyInputs, { ok: true }>,
  options: PrepareDependencyLayerOptions,
): Promise<DependencyLayer> {
  const layerDir = join(cacheDir, key);
  const existing = await useExistingLayer(cacheDir, layerDir);
  if (existing.state === 'usable') return { ok: true, layerDir, key, reused: true, bytes: existing.bytes, plan };
  if (existing.state === 'broken') return { ok: false, error: existing.reason, stopsRun: true };

  const fail = (reason: string): DependencyLayer => ({ ok: false, error: reason, stopsRun: true });
  let staging: string;
  try {
    await mkdir(join(cacheDir, STAGING_DIR), { recursive: true });
    // The process id in the name lets the garbage collector tell an abandoned install from a running one.
    staging = await mkdtemp(join(cacheDir, STAGING_DIR, `${key.slice(0, 12)}-${process.pid}-`));
  } catch (error) {
    return fail(`cannot make a staging folder in ${cacheDir}: ${errorMessage(error)}`);
  }
  try {
    const written = await writeInputFiles(repo, files, staging);
    if (written !== null) return fail(`cannot write the install's input files: ${written}`);
    const runInstall = options.runInstall ?? runInstallCommand;
    options.onInstall?.(plan);
    const installed = await runInstall({
      dir: staging,
      command: plan.command,
      environment: installEnvironment(options.environment ?? process.env),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      registriesOnly: plan.manager !== null,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const at = options.commit.slice(0, 12);
    if (!installed.ok) return fail(plan.manager === null ? `the setup command failed at ${at}: ${installed.error}` : `${plan.manager} could not install the dependencies of ${at}: ${installed.error}`);
    const made = await layerEntries(staging, plan, files);
    if (!made.ok) return fail(made.error);
    const layer = join(staging, 'layer');
    await mkdir(layer);
    for (const { path } of made.entries) {
      await mkdir(dirname(join(layer, path)), { recursive: true });
      await rename(join(staging, path), join(layer, path));
    }
    await writeLayerEntries(layerDir, made.entries);
    // Workspaces share these files (hard links, or an overlay's lower layer): no agent may change one in place.
    await withdrawSharedWrite(layer);
    const seal = await sealTree(layer);
    try {
      await rename(layer, layerDir);
    } catch (error) {
      if (!hasCode(error, 'EEXIST', 'ENOTEMPTY')) throw error;
      // Another process finished the same install first: its layer is as good as this one.
      const winner = await useExistingLayer(cacheDir, layerDir);
      if (winner.state === 'usable') return { ok: true, layerDir, key, reused: true, bytes: winner.bytes, plan };
      return fail(winner.state === 'broken' ? winner.reason : `another install of ${key} appeared and vanished at ${layerDir}`);
    }
    await writeLayerEntries(layerDir, made.entries);
    await writeSeal(layerDir, seal);
    await touchLastUsed(layerDir);
    return { ok: true, layerDir, key, reused: false, bytes: seal.bytes, plan };
  } catch (error) {
    return fail(`cannot prepare the dependency layer in ${cacheDir}: ${errorMessage(error)}`);
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The entries of the staging folder that become the layer: the package manager's
 * `node_modules/`, with that of each package of a monorepo whose package.json is an input
 * (`packages/a/node_modules/`, where pnpm links a package's own dependencies and npm puts the
 * versions that conflict with the root's); or whatever a project's setup made beside its input
 * files (the files it was given, and any it changed among them, stay out: the workspace has
 * its own).
 */
async function layerEntries(staging: string, plan: SetupPlan, files: readonly { readonly path: string }[]): Promise<{ ok: true; entries: LayerEntry[] } | { ok: false; error: string }> {
  if (plan.keeps === 'node_modules') {
    if (!(await isDirectory(join(staging, 'node_modules')))) return { ok: false, error: `${plan.command} reported success but made no node_modules folder` };
    const packageFolders = files.flatMap((file) => (file.path.endsWith('/package.json') ? [posix.dirname(file.path)] : []));
    const nested: LayerEntry[] = [];
    for (const folder of [...new Set(packageFolders)].sort()) {
      const path = `${folder}/node_modules`;
      if (await isDirectory(join(staging, path))) nested.push({ path, directory: true });
    }
    return { ok: true, entries: [{ path: 'node_modules', directory: true }, ...nested] };
  }
  const inputs = new Set(files.map((file) => file.path.split('/')[0]));
  const made = (await readdir(staging, { withFileTypes: true })).filter((entry) => !inputs.has(entry.name));
  const entries = made.map((entry) => ({ path: entry.name, directory: entry.isDirectory() })).sort((a, b) => (a.path < b.path ? -1 : 1));
  if (entries.length > 0) return { ok: true, entries };
  return {
    ok: false,
    error: `the setup command \`${plan.command}\` succeeded but made nothing beside its inputs, so there is nothing to share: it must make what the project needs (a .venv, a vendor folder) in the folder it runs in`,
  };
}

type ExistingLayer =
  | { readonly state: 'usable'; readonly bytes: number }
  | { readonly state: 'absent' }
  | { readonly state: 'broken'; readonly reason: string };

/**
 * Checks a layer found under its key against its seal before anyone uses it. A layer whose
 * files changed since it was made (an in-place write through a hard link in some workspace)
 * is moved aside and deleted, so the caller installs a fresh one. A layer without a seal was
 * renamed into place by an install that has not written its seal yet (or died just before):
 * the rename made it complete, so it is measured and sealed here.
 */
async function useExistingLayer(cacheDir: string, layerDir: string): Promise<ExistingLayer> {
  if (!(await pathExists(layerDir))) return { state: 'absent' };
  let current;
  try {
    current = await measureTree(layerDir);
  } catch {
    current = null;
  }
  const seal = current === null ? null : await readSeal(layerDir);
  if (current !== null && (seal === null || sameSeal(seal, current))) {
    try {
      if (seal === null) await writeSeal(layerDir, current);
      await touchLastUsed(layerDir);
    } catch (error) {
      return { state: 'broken', reason: `cannot record the use of ${layerDir}: ${errorMessage(error)}` };
    }
    return { state: 'usable', bytes: current.bytes };
  }
  const problem = await discard(cacheDir, layerDir);
  if (problem !== null) return { state: 'broken', reason: `the layer at ${layerDir} changed since it was made and ${problem}` };
  return { state: 'absent' };
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && codes.includes(error.code);
}

