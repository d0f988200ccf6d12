import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mountOverlay, unmountOverlay } from './overlay-mount.js';
import { errorMessage } from '../../../errors/error-message.js';

export type OverlaySupport = { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * Whether overlay workspaces work in `dir`: Linux, root, and one real overlay mount made,
 * written through and unmounted there. The upper layer lives on `dir`'s filesystem, so this
 * also catches filesystems that cannot hold one (an overlay root in a container, say). Leaves
 * nothing behind; never throws.
 */
export async function probeOverlaySupport(dir: string): Promise<OverlaySupport> {
  if (process.platform !== 'linux') return { ok: false, error: `overlay mounts are a Linux feature and this is ${process.platform}` };
  if (process.getuid?.() !== 0) return { ok: false, error: 'mounting an overlay needs root, and colony is not running as root' };
  const probe = join(dir, `probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  const lower = join(probe, 'lower');
  const upper = join(probe, 'upper');
  const target = join(probe, 'mount');
  try {
    await Promise.all([lower, upper, join(probe, 'work'), target].map((path) => mkdir(path, { recursive: true })));
    await writeFile(join(lower, 'seen.txt'), 'lower\n');
  } catch (error) {
    await rm(probe, { recursive: true, force: true }).catch(() => undefined);
    return { ok: false, error: `cannot make a test overlay in ${dir}: ${errorMessage(error)}` };
  }
  const mounted = await mountOverlay({ lowerDirs: [lower], upperDir: upper, workDir: join(probe, 'work') }, target);
  if (!mounted.ok) {
    await rm(probe, { recursive: true, force: true }).catch(() => undefined);
    return { ok: false, error: mounted.error };
  }
  let verdict: OverlaySupport = { ok: true };
  try {
    await writeFile(join(target, 'seen.txt'), 'upper\n');
    const lowerAfter = await readFile(join(lower, 'seen.txt'), 'utf8');
    const upperAfter = await readFile(join(upper, 'seen.txt'), 'utf8');
    if (lowerAfter !== 'lower\n' || upperAfter !== 'upper\n') verdict = { ok: false, error: `a write through a test overlay in ${probe} did not land in its upper layer` };
  } catch (error) {
    verdict = { ok: false, error: `writing through a test overlay in ${probe} failed: ${errorMessage(error)}` };
  }
  const unmounted = await unmountOverlay(target);
  // Never delete through a mount that is still there: the files would go, the mount would stay.
  if (!unmounted.ok) return { ok: false, error: `${unmounted.error}; the test overlay at ${target} is left mounted` };
  await rm(probe, { recursive: true, force: true }).catch(() => undefined);
  return verdict;
}

