import { join } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import { prepareDependencyLayer } from '../../workspace/dependencies/dependency-cache.js';
import { collectDependencyLayers } from '../../workspace/dependencies/dependency-layer-collect.js';
import { linkDependencyLayer } from '../../workspace/dependencies/dependency-layer-link.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { RunInstall } from '../../workspace/dependencies/npm-install.js';

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
  readonly record: (body: EventBody) => void;
  /** Runs the install; the run passes its sandbox's (see `sandboxedInstall`). */
  readonly runInstall: RunInstall;
  readonly signal?: AbortSignal;
}

/**
 * Once per run, before any workspace: makes sure the dependencies of main's commit are
 * installed once in the state directory's cache, records `dependencies.prepared` or
 * `dependencies.skipped`, and deletes old layers. Returns the layer to link into each new
 * workspace, or null: the run goes on without one, and agents install their own if they must.
 */
export async function prepareSharedDependencies(options: PrepareSharedDependenciesOptions): Promise<string | null> {
  if (!options.enabled) {
    options.record({ type: 'dependencies.skipped', data: { reason: 'shared dependency installs are switched off (--no-shared-deps)' } });
    return null;
  }
  const cacheDir = dependencyCacheDir(options.stateDir);
  const started = performance.now();
  const layer = await prepareDependencyLayer(options.repo, {
    cacheDir,
    commit: options.commit,
    runInstall: options.runInstall,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const durationMs = Math.round(performance.now() - started);
  if (layer.ok) {
    const { key, layerDir, reused, bytes } = layer;
    options.record({ type: 'dependencies.prepared', data: { key, layerDir, reused, bytes, durationMs } });
  } else {
    options.record({ type: 'dependencies.skipped', data: { reason: layer.error } });
  }
  const collected = await collectDependencyLayers(cacheDir, { protect: layer.ok ? [layer.key] : [] });
  if (collected.removed.length > 0 || collected.problems.length > 0) {
    options.record({ type: 'dependencies.collected', data: { removed: [...collected.removed], problems: [...collected.problems] } });
  }
  return layer.ok ? layer.layerDir : null;
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
