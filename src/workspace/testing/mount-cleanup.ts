import { readOverlayMounts, unmountOverlay } from '../overlay-mount.js';

/**
 * Unmounts every overlay mounted under `dir`, deepest first, so a test that failed half-way
 * never leaves a mount behind (and never deletes a directory through one). Throws when one
 * stays mounted, since deleting `dir` then would reach into it.
 */
export async function unmountEverythingUnder(dir: string): Promise<void> {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const mounts = (await readOverlayMounts())
    .map((mount) => mount.mountPoint)
    .filter((mountPoint) => mountPoint.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const mountPoint of mounts) {
    const result = await unmountOverlay(mountPoint);
    if (!result.ok) throw new Error(result.error);
  }
}
