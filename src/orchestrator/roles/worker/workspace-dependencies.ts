import { copyFile, lstat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventBody } from '../../../events/event-types.js';
import type { DependencyLayers } from '../../setup/dependency-layers.js';
import { gitIgnoresLayer, linkDependencyLayer, unlinkDependencyLayer } from '../../../workspace/dependencies/dependency-layer-link.js';
import { readSeal, recordLayerUse } from '../../../workspace/dependencies/dependency-layer-records.js';
import { describeFailure, runGit } from '../../../workspace/git/git.js';
import type { Workspace } from '../../../workspace/workspace.js';
import type { WorkspaceProvider } from '../../../workspace/workspace-provider.js';
import { errorMessage } from '../../../errors/error-message.js';

/** The layer a workspace has: stacked under it (an overlay's lower layer) or linked into it. */
export interface WorkspaceLayer {
  readonly layerDir: string;
  readonly stacked: boolean;
}

export interface WorkspaceDependenciesOptions {
  readonly workspace: Workspace;
  readonly layers: DependencyLayers;
  readonly provider: WorkspaceProvider;
  /** What the workspace was given when it was made, or null (no layer, or one git would not ignore). */
  readonly layer: WorkspaceLayer | null;
  /**
   * True for a workspace made just now, whose files are its commit's: the files that decide
   * its layer are looked at when it starts, and a change is what the agent makes after. False for
   * a workspace taken up again after a restart, whose files are checked at its first command.
   */
  readonly fresh: boolean;
  readonly record: (body: EventBody) => void;
}

export interface WorkspaceDependencies {
  /** Looks at the workspace's files now, so a change is one made after this. */
  start(): Promise<void>;
  /**
   * Called before each of the agent's commands: when a file that decides the layer changed
   * since the last look, the workspace gets the layer of its files as they are now (installed
   * first when no layer has its inputs). Returns what the agent should be told (what was
   * installed, or why it could not be), or null. Never throws.
   */
  beforeCommand(): Promise<string | null>;
}

/**
 * Keeps a worker's workspace's dependencies those of its own package.json, lockfile and
 * manager configuration (or a setup's inputs): a worker that adds a dependency to package.json
 * gets it installed for its commands, without the network itself, as main's next layer
 * would be once its change lands. The install is the run's (the same confinement, the same
 * registries, recorded the same way) and is shared: main's layer after the worker lands has
 * the same inputs and is the same layer.
 */
export function followWorkspaceDependencies(options: WorkspaceDependenciesOptions): WorkspaceDependencies {
  const { workspace, layers, record } = options;
  let current = options.layer;
  let paths: readonly string[] | null = null;
  let seen: ReadonlyMap<string, string> | null = null;

  const look = async (): Promise<ReadonlyMap<string, string>> => {
    paths ??= await layers.inputPaths(workspace.baseCommit);
    return fingerprint(workspace.path, paths);
  };

  const tellFailure = (changed: readonly string[], reason: string): string => {
    record({ type: 'dependencies.skipped', data: { reason: `the workspace ${workspace.path} changed ${changed.join(', ')} and keeps the dependencies it had: ${reason}` } });
    return `colony could not set up the dependencies your changes to ${changed.join(', ')} ask for, so your commands still run with the ones you had: ${reason}`;
  };

  return {
    async start() {
      if (options.fresh) seen = await look();
    },
    async beforeCommand() {
      try {
        const now = await look();
        if (now.size === 0) return null;
        const changed = seen === null ? [...now.keys()] : [...now.keys()].filter((path) => now.get(path) !== seen?.get(path));
        seen = now;
        if (changed.length === 0) return null;
        const tree = await workspaceTree(workspace, [...now.keys()]);
        if (!tree.ok) return tellFailure(changed, tree.error);
        const started = performance.now();
        const wanted = await layers.forTree(tree.tree);
        // Inputs colony has no install for (a package.json with no dependencies) are not the agent's problem.
        if (wanted.layerDir === null) return wanted.failed ? tellFailure(changed, wanted.error) : null;
        if (wanted.layerDir === current?.layerDir) return null;
        const placed = await place(options, current, wanted.layerDir);
        if (!placed.ok) return tellFailure(changed, placed.error);
        current = placed.layer;
        const durationMs = Math.round(performance.now() - started);
        record({ type: 'dependencies.linked', data: { path: workspace.path, files: placed.files, durationMs, changed } });
        return `colony set up the dependencies your changes to ${changed.join(', ')} ask for in your workspace (${(durationMs / 1000).toFixed(1)} s); when your work lands, main gets the same.`;
      } catch (error) {
        return tellFailure(['the files that decide them'], errorMessage(error));
      }
    },
  };
}

type Placed = { readonly ok: true; readonly layer: WorkspaceLayer; readonly files: number } | { readonly ok: false; readonly error: string };

/**
 * Puts the layer at `to` in the workspace in the place of `from`: an overlay mounts again with
 * it as its lower layer (what the agent changed stays on top); a worktree has `from`'s entries
 * taken away and `to`'s linked in.
 */
async function place({ workspace, provider }: WorkspaceDependenciesOptions, from: WorkspaceLayer | null, to: string): Promise<Placed> {
  if (provider.replaceSharedLayer !== undefined && (from === null || from.stacked)) {
    if (!(await gitIgnoresLayer(workspace.path, to))) return { ok: false, error: `git does not ignore what the layer ${to} holds, so landing the work would commit it` };
    const replaced = await provider.replaceSharedLayer(workspace, from?.layerDir ?? null, to);
    if (!replaced.ok) return replaced;
    await recordLayerUse(to, workspace.path);
    return { ok: true, layer: { layerDir: to, stacked: true }, files: (await readSeal(to))?.files ?? 0 };
  }
  if (from !== null) await unlinkDependencyLayer(workspace.path, from.layerDir);
  const linked = await linkDependencyLayer(workspace.path, to);
  if (!linked.ok) return linked;
  return { ok: true, layer: { layerDir: to, stacked: false }, files: linked.files };
}

/** What each of `paths` in `dir` is now (size, modification time, inode), or absent; a change in any is a change of the file. */
async function fingerprint(dir: string, paths: readonly string[]): Promise<ReadonlyMap<string, string>> {
  const marks = new Map<string, string>();
  for (const path of paths) {
    try {
      const info = await lstat(join(dir, path));
      marks.set(path, `${info.size}:${info.mtimeMs}:${info.ino}`);
    } catch {
      marks.set(path, 'absent');
    }
  }
  return marks;
}

/**
 * A tree of the workspace's files as they are now, written through a copy of its index (so
 * files whose stat git trusts are not read again), its own index and HEAD untouched. The files
 * that decide the layer are taken out of the copy first and so read afresh: git compares
 * modification times to the second, and an edit that keeps a file's size within the second of
 * its checkout would otherwise go unseen.
 */
async function workspaceTree(workspace: Workspace, paths: readonly string[]): Promise<{ readonly ok: true; readonly tree: string } | { readonly ok: false; readonly error: string }> {
  const index = join(workspace.gitDir, 'colony-dependencies.index');
  const place = { path: workspace.path, gitDir: workspace.gitDir };
  const env = { GIT_INDEX_FILE: index };
  try {
    await copyFile(join(workspace.gitDir, 'index'), index);
    for (const args of [['rm', '--cached', '--quiet', '--ignore-unmatch', '--', ...paths], ['add', '--all']]) {
      const result = await runGit(place, args, { env });
      if (result.code !== 0) return { ok: false, error: `cannot read the workspace's files: ${describeFailure(args, result)}` };
    }
    const writeArgs = ['write-tree'];
    const written = await runGit(place, writeArgs, { env });
    if (written.code !== 0) return { ok: false, error: `cannot read the workspace's files: ${describeFailure(writeArgs, written)}` };
    return { ok: true, tree: written.stdout.trim() };
  } finally {
    await rm(index, { force: true });
  }
}
