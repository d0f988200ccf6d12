import { join } from 'node:path';
import type { ColonyEvent, EventBody } from '../../events/event-types.js';
import { prepareDependencyLayer, readLayerInputs, type DependencyLayer } from '../../workspace/dependencies/dependency-cache.js';
import type { DependencyInputs } from '../../workspace/dependencies/input-files.js';
import { PROJECT_FILES } from '../../workspace/dependencies/dependency-inputs.js';
import { fixedDependencyLayer, type DependencyLayers } from './dependency-layers.js';
import { lockfileConflictSettler } from '../../workspace/dependencies/lockfile-conflicts.js';
import { STAGING_DIR } from '../../workspace/dependencies/dependency-layer-records.js';
import type { ConflictSettler } from '../../workspace/git/rebase-state.js';
import { collectDependencyLayers } from '../../workspace/dependencies/dependency-layer-collect.js';
import { linkDependencyLayer, unlinkDependencyLayer } from '../../workspace/dependencies/dependency-layer-link.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { RunInstall } from '../../workspace/dependencies/npm-install.js';
import type { SetupCommand } from '../../workspace/dependencies/setup-command-inputs.js';

/** Where a state directory keeps its dependency layers: beside the workspaces, on their file system. */
export function dependencyCacheDir(stateDir: string): string {
  return join(stateDir, 'dependency-layers');
}

export interface PrepareSharedDependenciesOptions {
  readonly repo: Repository;
  /** Main commit the run starts from. */
  readonly commit: string;
  readonly stateDir: string;
  /** False when the user switched shared installs off (`--no-shared-deps`). */
  readonly enabled: boolean;
  /** The project's own setup (`--setup`, `setup` in colony.toml), which takes the place of npm's install; null for none. */
  readonly setup: SetupCommand | null;
  readonly record: (body: EventBody) => void;
  /** Runs the install; the run passes its sandbox's (see `sandboxedInstall`). */
  readonly runInstall: RunInstall;
  readonly signal?: AbortSignal;
  /** How often a running install records that it still runs; 15 s when absent. */
  readonly progressEveryMs?: number;
}

/**
 * The run's layers: the one of main's starting commit (null when the repository has none and
 * workers do without), and every later commit's through `layers`; and how merges settle a
 * package.json and lockfile two workers changed at once. A failure is a setup the run must not
 * start without, with what to do about it.
 */
export type SharedDependencies =
  | { readonly ok: true; readonly layerDir: string | null; readonly layers: DependencyLayers; readonly settleConflicts: ConflictSettler }
  | { readonly ok: false; readonly error: string; readonly fix: string };

const PROGRESS_EVERY_MS = 15_000;

/**
 * Once per run, before any workspace: makes sure the dependencies of main's commit (or what the
 * project's own setup makes) are installed once in the state directory's cache, recording
 * `dependencies.installing` while an install runs, then `dependencies.prepared`,
 * `dependencies.skipped` (no install colony knows for the repository) or `dependencies.failed`,
 * and deletes old layers. A failed setup comes back as `{ ok: false }`: no agent should start
 * on a project whose dependencies are missing, and none of their work be counted as failed for it.
 */
export async function prepareSharedDependencies(options: PrepareSharedDependenciesOptions): Promise<SharedDependencies> {
  if (!options.enabled) {
    options.record({ type: 'dependencies.skipped', data: { reason: 'shared dependency installs are switched off (--no-shared-deps)' } });
    return { ok: true, layerDir: null, layers: fixedDependencyLayer(null), settleConflicts: conflictSettler(options) };
  }
  const started = performance.now();
  const layer = await prepareRecorded(options, options.commit);
  if (!layer.ok && layer.stopsRun) {
    // Stopped by the user is not a failure of the project's setup: nothing to fix.
    const fix = options.signal?.aborted === true ? 'nothing: it was stopped by the user, and colony resume installs again' : setupFix(options.setup);
    options.record({ type: 'dependencies.failed', data: { error: layer.error, fix, durationMs: Math.round(performance.now() - started) } });
    return { ok: false, error: layer.error, fix };
  }
  if (!layer.ok) options.record({ type: 'dependencies.skipped', data: { reason: layer.error } });
  const cacheDir = dependencyCacheDir(options.stateDir);
  const collected = await collectDependencyLayers(cacheDir, { protect: layer.ok ? [layer.key] : [] });
  if (collected.removed.length > 0 || collected.problems.length > 0) {
    options.record({ type: 'dependencies.collected', data: { removed: [...collected.removed], problems: [...collected.problems] } });
  }
  const start = layer.ok ? { key: layer.key, layerDir: layer.layerDir } : null;
  return { ok: true, layerDir: start?.layerDir ?? null, layers: layersOfCommits(options, start), settleConflicts: conflictSettler(options) };
}

/** npm runs in the layers' staging folder, confined like the setup's install. */
function conflictSettler(options: PrepareSharedDependenciesOptions): ConflictSettler {
  return lockfileConflictSettler({ stagingDir: join(dependencyCacheDir(options.stateDir), STAGING_DIR), runInstall: options.runInstall });
}

/**
 * Prepares the layer of `commit`, recording `dependencies.installing` while an install runs and
 * `dependencies.prepared` when the layer is there; a failure or a repository without an install
 * is left to the caller to record.
 */
async function prepareRecorded(options: PrepareSharedDependenciesOptions, commit: string): Promise<DependencyLayer> {
  const started = performance.now();
  let progress: NodeJS.Timeout | undefined;
  const layer = await prepareDependencyLayer(options.repo, {
    cacheDir: dependencyCacheDir(options.stateDir),
    commit,
    setup: options.setup,
    runInstall: options.runInstall,
    onInstall: (plan) => {
      const registry = plan.manager === null ? plan.registry : (plan.registry ?? npmRegistry());
      const installing = { command: plan.label, registry: registry === null ? null : withoutCredentials(registry), packages: plan.packages };
      options.record({ type: 'dependencies.installing', data: { ...installing, elapsedMs: 0 } });
      progress = setInterval(() => {
        options.record({ type: 'dependencies.installing', data: { ...installing, elapsedMs: Math.round(performance.now() - started) } });
      }, options.progressEveryMs ?? PROGRESS_EVERY_MS);
      progress.unref();
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }).finally(() => clearInterval(progress));
  if (layer.ok) {
    const { key, layerDir, reused, bytes } = layer;
    const durationMs = Math.round(performance.now() - started);
    options.record({ type: 'dependencies.prepared', data: { key, layerDir, reused, bytes, durationMs, command: layer.plan.label, commit } });
  }
  return layer;
}

/**
 * The layers of the commits main moves to as work lands: a commit whose inputs (package.json,
 * a lockfile, a setup's input files) are those of a layer already prepared gets that layer at
 * the cost of reading them from git; new inputs get a new layer, installed once (with the same
 * events as the first) while whoever asked waits. An install that fails mid-run does not stop
 * the run: it is recorded as skipped, and the commit gets the newest layer that did install, so
 * the agents' checks show what is missing.
 */
function layersOfCommits(options: PrepareSharedDependenciesOptions, start: { readonly key: string; readonly layerDir: string } | null): DependencyLayers {
  const byKey = new Map<string, Promise<Prepared>>();
  const byCommit = new Map<string, Promise<string | null>>();
  // Read once per commit or tree: a worker's workspace asks for its commit's layer and then for the files that decide it.
  const inputsOf = new Map<string, Promise<DependencyInputs>>();
  const readInputs = (commit: string): Promise<DependencyInputs> => {
    const known = inputsOf.get(commit);
    if (known !== undefined) return known;
    const reading = readLayerInputs(options.repo, commit, options.setup);
    inputsOf.set(commit, reading);
    return reading;
  };
  let newest = start?.layerDir ?? null;
  if (start !== null) byKey.set(start.key, Promise.resolve({ layerDir: start.layerDir, error: null, failed: false }));
  const prepare = async (commit: string): Promise<Prepared> => {
    const inputs = await readInputs(commit);
    if (!inputs.ok) {
      if (inputs.stopsRun) options.record({ type: 'dependencies.skipped', data: { reason: `${inputs.error}; checkouts of ${commit.slice(0, 12)} get the layer of an earlier commit` } });
      return { layerDir: null, error: inputs.error, failed: inputs.stopsRun };
    }
    const known = byKey.get(inputs.key);
    if (known !== undefined) return known;
    const preparing = prepareRecorded(options, commit).then((layer): Prepared => {
      if (layer.ok) {
        newest = layer.layerDir;
        return { layerDir: layer.layerDir, error: null, failed: false };
      }
      const reason = `the install for ${commit.slice(0, 12)} failed, so its checkouts get the layer of an earlier commit: ${layer.error}`;
      options.record({ type: 'dependencies.skipped', data: { reason } });
      return { layerDir: null, error: layer.error, failed: true };
    });
    byKey.set(inputs.key, preparing);
    return preparing;
  };
  return {
    forCommit: (commit) => {
      const known = byCommit.get(commit);
      if (known !== undefined) return known;
      const layer = prepare(commit).then((prepared) => prepared.layerDir ?? (prepared.failed ? newest : null));
      byCommit.set(commit, layer);
      return layer;
    },
    forTree: async (tree) => {
      const prepared = await prepare(tree);
      return prepared.layerDir === null ? { layerDir: null, error: prepared.error ?? 'there is no install for it', failed: prepared.failed } : { layerDir: prepared.layerDir, error: null };
    },
    inputPaths: async (commit) => {
      const inputs = await readInputs(commit);
      const named = options.setup === null ? PROJECT_FILES : options.setup.inputs;
      return [...new Set([...named, ...(inputs.ok ? inputs.files.map((file) => file.path) : [])])].sort();
    },
  };
}

/** A layer prepared for a commit or a tree, or why there is none; `failed` when its install (or a setup's input) failed, rather than there being no install. */
interface Prepared {
  readonly layerDir: string | null;
  readonly error: string | null;
  readonly failed: boolean;
}

/** The registry npm uses when the project's `.npmrc` names none. */
function npmRegistry(): string {
  return process.env['npm_config_registry'] ?? process.env['NPM_CONFIG_REGISTRY'] ?? 'https://registry.npmjs.org/';
}

/** A registry's address as it may be shown: a user name and password in it are left out. */
function withoutCredentials(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}

/**
 * What the setup's install asked for that its proxy refused (a lockfile fetching a tarball from
 * github.com), in a sentence to add to the failure, or nothing: the install's own words about
 * a refused tunnel do not say why.
 */
export function refusedBySetup(requests: readonly ColonyEvent[]): string {
  const hosts = [...new Set(requests.flatMap((event) => (event.type === 'network.requested' && event.data.setup === true && !event.data.allowed ? [event.data.host] : [])))];
  if (hosts.length === 0) return '';
  return `\nThe install asked for ${hosts.join(', ')}, which colony's setup does not reach: it reaches only the package registries the project's configuration names. Depend on a registry's package instead, or run with --sandbox none (the install then has your network) or --no-shared-deps.`;
}

/** What to do about a failed setup. */
function setupFix(setup: SetupCommand | null): string {
  if (setup !== null) {
    return 'fix the setup command or its inputs (setup and setup-inputs in colony.toml, or --setup and --setup-inputs) and run again';
  }
  return "fix package.json (or the lockfile) so that the install above succeeds (run it yourself to check) and commit the fix, then run again; or pass --no-shared-deps to start the run without installed dependencies";
}

/**
 * Brings a checkout that moved to another commit (a planner's view following main) from the
 * layer it has, `from`, to the one of its commit, `to`: the old layer's entries are removed
 * (they are colony's links, never the project's files) and the new one is linked. Returns the
 * layer the checkout has now.
 */
export async function followSharedDependencies(path: string, from: string | null, to: string | null, record: (body: EventBody) => void): Promise<string | null> {
  if (from === to) return from;
  if (from !== null) await unlinkDependencyLayer(path, from);
  if (to !== null) await linkSharedDependencies(path, to, record);
  return to;
}

/**
 * Hard-links the run's layer into a new workspace and records `dependencies.linked`, or
 * `dependencies.skipped` with the reason when the workspace cannot take it (its repository
 * does not ignore node_modules, say). The worker goes on either way; returns whether it was linked.
 */
export async function linkSharedDependencies(workspacePath: string, layerDir: string, record: (body: EventBody) => void): Promise<boolean> {
  const started = performance.now();
  const linked = await linkDependencyLayer(workspacePath, layerDir);
  const durationMs = Math.round(performance.now() - started);
  if (linked.ok) record({ type: 'dependencies.linked', data: { path: workspacePath, files: linked.files, durationMs } });
  else record({ type: 'dependencies.skipped', data: { reason: linked.error } });
  return linked.ok;
}
