import { join } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import { prepareDependencyLayer } from '../../workspace/dependencies/dependency-cache.js';
import { collectDependencyLayers } from '../../workspace/dependencies/dependency-layer-collect.js';
import { linkDependencyLayer } from '../../workspace/dependencies/dependency-layer-link.js';
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
 * The run's layer: its folder, or null when the repository has none and workers do without. A
 * failure is a setup the run must not start without, with what to do about it.
 */
export type SharedDependencies = { readonly ok: true; readonly layerDir: string | null } | { readonly ok: false; readonly error: string; readonly fix: string };

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
    return { ok: true, layerDir: null };
  }
  const cacheDir = dependencyCacheDir(options.stateDir);
  const started = performance.now();
  let progress: NodeJS.Timeout | undefined;
  const layer = await prepareDependencyLayer(options.repo, {
    cacheDir,
    commit: options.commit,
    setup: options.setup,
    runInstall: options.runInstall,
    onInstall: (plan) => {
      const registry = plan.keeps === 'node_modules' ? (plan.registry ?? npmRegistry()) : plan.registry;
      const installing = { command: plan.command, registry: registry === null ? null : withoutCredentials(registry), packages: plan.packages };
      options.record({ type: 'dependencies.installing', data: { ...installing, elapsedMs: 0 } });
      progress = setInterval(() => {
        options.record({ type: 'dependencies.installing', data: { ...installing, elapsedMs: Math.round(performance.now() - started) } });
      }, options.progressEveryMs ?? PROGRESS_EVERY_MS);
      progress.unref();
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }).finally(() => clearInterval(progress));
  const durationMs = Math.round(performance.now() - started);
  if (layer.ok) {
    const { key, layerDir, reused, bytes } = layer;
    options.record({ type: 'dependencies.prepared', data: { key, layerDir, reused, bytes, durationMs, command: layer.plan.command } });
  } else if (layer.stopsRun) {
    // Stopped by the user is not a failure of the project's setup: nothing to fix.
    const fix = options.signal?.aborted === true ? 'nothing: it was stopped by the user, and colony resume installs again' : setupFix(options.setup);
    options.record({ type: 'dependencies.failed', data: { error: layer.error, fix, durationMs } });
    return { ok: false, error: layer.error, fix };
  } else {
    options.record({ type: 'dependencies.skipped', data: { reason: layer.error } });
  }
  const collected = await collectDependencyLayers(cacheDir, { protect: layer.ok ? [layer.key] : [] });
  if (collected.removed.length > 0 || collected.problems.length > 0) {
    options.record({ type: 'dependencies.collected', data: { removed: [...collected.removed], problems: [...collected.problems] } });
  }
  return { ok: true, layerDir: layer.ok ? layer.layerDir : null };
}

/** The registry npm uses when the project's `.npmrc` names none. */
function npmRegistry(): string {
  return process.env['npm_config_registry'] ?? process.env['NPM_CONFIG_REGISTRY'] ?? 'https://registry.npmjs.org/';
}

/** A registry's address as it may be shown: a user name and password in it are left out. */
function withoutCredentials(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}

/** What to do about a failed setup. */
function setupFix(setup: SetupCommand | null): string {
  if (setup !== null) {
    return 'fix the setup command or its inputs (setup and setup-inputs in colony.toml, or --setup and --setup-inputs) and run again';
  }
  return "fix package.json (or the lockfile) so that the install above succeeds (run it yourself to check) and commit the fix, then run again; or pass --no-shared-deps to start the run without installed dependencies";
}

/**
 * Hard-links the run's layer into a new workspace and records `dependencies.linked`, or
 * `dependencies.skipped` with the reason when the workspace cannot take it (its repository
 * does not ignore node_modules, say). The worker goes on either way.
 */
export async function linkSharedDependencies(workspacePath: string, layerDir: string, record: (body: EventBody) => void): Promise<void> {
  const started = performance.now();
  const linked = await linkDependencyLayer(workspacePath, layerDir);
  const durationMs = Math.round(performance.now() - started);
  if (linked.ok) record({ type: 'dependencies.linked', data: { path: workspacePath, files: linked.files, durationMs } });
  else record({ type: 'dependencies.skipped', data: { reason: linked.error } });
}
