/**
 * Which dependency layer a checkout of a commit gets: the one made from that commit's inputs
 * (package.json and its lockfile, or a setup's input files), so a package a worker added and
 * landed is there for every workspace, view and check made from main after it.
 */
export interface DependencyLayers {
  /** The layer's folder for a checkout of `commit`, prepared first when it is new; null when there is none. Never throws. */
  forCommit(commit: string): Promise<string | null>;
}

/** The same layer, or none, for every commit: a command that checks one commit only. */
export function fixedDependencyLayer(layerDir: string | null): DependencyLayers {
  return { forCommit: () => Promise.resolve(layerDir) };
}
