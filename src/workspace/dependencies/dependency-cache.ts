import { withdrawSharedWrite } from '../files/group-access.js';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readDependencyInputs, writeInputFiles, type DependencyInputs } from './dependency-inputs.js';
import { discard, measureTree, readSeal, sameSeal, sealTree, STAGING_DIR, touchLastUsed, writeSeal } from './dependency-layer-records.js';
import { installEnvironment, runNpm, type RunInstall } from './npm-install.js';
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
  /** Runs the install; the real npm when not given. */
  readonly runInstall?: RunInstall;
  readonly signal?: AbortSignal;
  /** How long the install may take; 10 minutes when not given. */
  readonly timeoutMs?: number;
  /** The environment the install's allow-list is read from; `process.env` when not given. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
}

/**
 * A prepared layer, or why there is none. `layerDir` holds exactly `node_modules/`; `reused`
 * says the layer existed already (or another caller made it meanwhile) and no install ran for
 * this call; `bytes` is the size of the files in it.
 */
export type DependencyLayer =
  | { readonly ok: true; readonly layerDir: string; readonly key: string; readonly reused: boolean; readonly bytes: number }
  | { readonly ok: false; readonly error: string };

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Installs in progress in this process, by layer folder: a second caller waits for the first. */
const inProgress = new Map<string, Promise<DependencyLayer>>();

/**
 * Makes sure the dependencies of the repository's root npm package at `options.commit` are
 * installed once in `<cacheDir>/<key>/node_modules`, and says where. The key covers
 * package.json, the lockfile, `.npmrc`, node's major version and the platform, so a layer is
 * reused exactly when an install would produce the same tree.
 *
 * The install (`npm ci --ignore-scripts --no-audit --no-fund`, or `npm install` with the same
 * flags for a package without a lockfile, with an allow-listed
 * environment and a timeout) runs in a private staging folder holding only the install's
 * inputs, and its result appears under the key with one rename, so no caller ever sees half
 * a layer. Two processes installing the same key both install; the first rename wins and the
 * other uses the winner's layer. Callers in one process share one install.
 *
 * Never throws: a repository without an npm lockfile, a failed install (with the tail of npm's
 * output), a full disk, all come back as `{ ok: false, error }`, and the run goes on without
 * a layer.
 */
export async function prepareDependencyLayer(repo: Repository, options: PrepareDependencyLayerOptions): Promise<DependencyLayer> {
  if (options.signal?.aborted === true) return { ok: false, error: 'the preparation was cancelled' };
  const inputs = await readDependencyInputs(repo, options.commit);
  if (!inputs.ok) return inputs;
  const cacheDir = resolve(options.cacheDir);
  const layerDir = join(cacheDir, inputs.key);
  const running = inProgress.get(layerDir);
  if (running !== undefined) return running.then((layer) => (layer.ok ? { ...layer, reused: true } : layer));
  const preparing = ensureLayer(repo, cacheDir, inputs, options).finally(() => inProgress.delete(layerDir));
  inProgress.set(layerDir, preparing);
  return preparing;
}

async function ensureLayer(
  repo: Repository,
  cacheDir: string,
  { key, files, args }: Extract<DependencyInputs, { ok: true }>,
  options: PrepareDependencyLayerOptions,
): Promise<DependencyLayer> {
  const layerDir = join(cacheDir, key);
  const existing = await useExistingLayer(cacheDir, layerDir);
  if (existing.state === 'usable') return { ok: true, layerDir, key, reused: true, bytes: existing.bytes };
  if (existing.state === 'broken') return { ok: false, error: existing.reason };

  const fail = (reason: string): DependencyLayer => ({ ok: false, error: reason });
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
    const runInstall = options.runInstall ?? runNpm;
    const installed = await runInstall({
      dir: staging,
      args,
      environment: installEnvironment(options.environment ?? process.env),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (!installed.ok) return fail(`npm could not install the dependencies of ${options.commit.slice(0, 12)}: ${installed.error}`);
    const modules = join(staging, 'node_modules');
    if (!(await isDirectory(modules))) return fail(`npm ${args[0] ?? ''} reported success but made no node_modules folder`);
    // Workspaces share these files (hard links, or an overlay's lower layer): no agent may change one in place.
    await withdrawSharedWrite(modules);
    const seal = await sealTree(modules);
    const layer = join(staging, 'layer');
    await mkdir(layer);
    await rename(modules, join(layer, 'node_modules'));
    try {
      await rename(layer, layerDir);
    } catch (error) {
      if (!hasCode(error, 'EEXIST', 'ENOTEMPTY')) throw error;
      // Another process finished the same install first: its layer is as good as this one.
      const winner = await useExistingLayer(cacheDir, layerDir);
      if (winner.state === 'usable') return { ok: true, layerDir, key, reused: true, bytes: winner.bytes };
      return fail(winner.state === 'broken' ? winner.reason : `another install of ${key} appeared and vanished at ${layerDir}`);
    }
    await writeSeal(layerDir, seal);
    await touchLastUsed(layerDir);
    return { ok: true, layerDir, key, reused: false, bytes: seal.bytes };
  } catch (error) {
    return fail(`cannot prepare the dependency layer in ${cacheDir}: ${errorMessage(error)}`);
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
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
    current = await measureTree(join(layerDir, 'node_modules'));
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

