/**
 * Which dependency layer a checkout of a commit gets: the one made from that commit's inputs
 * (package.json and its lockfile, or a setup's input files), so a package a worker added and
 * landed is there for every workspace, view and check made from main after it.
 */
export interface DependencyLayers {
  /** The layer's folder for a checkout of `commit`, prepared first when it is new; null when there is none. Never throws. */
  forCommit(commit: string): Promise<string | null>;
  /**
   * The layer for a worker's workspace as it is now, by a tree of its files (`tree`, written
   * from the workspace), prepared first when its inputs are new: the layer, or null with the
   * reason when there is none for it, `failed` when its install failed (or a setup's input is
   * missing) rather than colony having no install for such inputs. Never throws.
   */
  forTree(tree: string): Promise<TreeLayer>;
  /**
   * The files of a checkout of `commit` whose change can change its layer (package.json, the
   * lockfile and the package manager's configuration, a setup's inputs), relative to its root;
   * empty when nothing the checkout holds can (no layers at all). Never throws.
   */
  inputPaths(commit: string): Promise<readonly string[]>;
}

export type TreeLayer = { readonly layerDir: string; readonly error: null } | { readonly layerDir: null; readonly error: string; readonly failed: boolean };

/** The same layer, or none, for every commit: a command that checks one commit only. */
export function fixedDependencyLayer(layerDir: string | null): DependencyLayers {
  return {
    forCommit: () => Promise.resolve(layerDir),
    forTree: () => Promise.resolve(layerDir === null ? { layerDir: null, error: 'the run has no shared dependencies', failed: false } : { layerDir, error: null }),
    inputPaths: () => Promise.resolve([]),
  };
}
