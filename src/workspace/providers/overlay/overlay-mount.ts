import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export type MountResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** What one overlay mount is made of. Lower directories come top first, as the kernel takes them. */
export interface OverlayLayers {
  readonly lowerDirs: readonly string[];
  readonly upperDir: string;
  readonly workDir: string;
}

/**
 * Characters the kernel's (or mount's) option parser gives a meaning to. Paths holding them
 * would need escaping that differs between kernels, so they are refused with a clear message.
 */
const UNSAFE_PATH = /[,:\\\n]/;

/** Why these layers cannot be mounted as given, or null when they can. */
export function checkOverlayPaths(paths: readonly string[]): string | null {
  const bad = paths.find((path) => UNSAFE_PATH.test(path));
  return bad === undefined ? null : `the path ${JSON.stringify(bad)} holds a comma, colon, backslash or newline, which overlay mount options cannot carry`;
}

function run(command: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' } }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (error === null) resolve({ code: 0, output });
      else resolve({ code: typeof error.code === 'number' ? error.code : 127, output: output || error.message });
    });
  });
}

/**
 * Mounts an overlay at `target`: the lower directories read-only and stacked (the first on
 * top), writes going to `upperDir`. `redirect_dir=on` lets a directory that came from a lower
 * layer be renamed (git mv, mv) instead of failing with EXDEV.
 */
export async function mountOverlay(layers: OverlayLayers, target: string): Promise<MountResult> {
  const paths = [...layers.lowerDirs, layers.upperDir, layers.workDir, target];
  const unsafe = checkOverlayPaths(paths);
  if (unsafe !== null) return { ok: false, error: `cannot mount an overlay at ${target}: ${unsafe}` };
  const options = `lowerdir=${layers.lowerDirs.join(':')},upperdir=${layers.upperDir},workdir=${layers.workDir},redirect_dir=on`;
  const result = await run('mount', ['-t', 'overlay', 'overlay', '-o', options, target]);
  if (result.code === 0) return { ok: true };
  return { ok: false, error: `mount -t overlay at ${target} failed (exit ${result.code}): ${result.output}` };
}

const BUSY_RETRIES = 5;
const BUSY_WAIT_MS = 100;

/**
 * Unmounts the overlay at `target`. A mount still in use (a process left running inside it) is
 * retried a few times, then detached lazily: callers unmount only once the workspace's work
 * has been judged, and the kernel frees the mount when its last user leaves. A target that is
 * not mounted counts as unmounted.
 */
export async function unmountOverlay(target: string): Promise<MountResult> {
  for (let attempt = 0; attempt < BUSY_RETRIES; attempt += 1) {
    const result = await run('umount', [target]);
    if (result.code === 0 || /not mounted|no mount point/i.test(result.output)) return { ok: true };
    if (!/busy/i.test(result.output)) return { ok: false, error: `umount ${target} failed (exit ${result.code}): ${result.output}` };
    await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS));
  }
  const lazy = await run('umount', ['--lazy', target]);
  if (lazy.code === 0) return { ok: true };
  return { ok: false, error: `umount --lazy ${target} failed (exit ${lazy.code}): ${lazy.output}` };
}

/** One line of /proc/self/mountinfo, the parts colony reads. */
export interface MountEntry {
  readonly mountPoint: string;
  readonly fsType: string;
  /** The filesystem's own options, e.g. `rw,lowerdir=…,upperdir=…` for an overlay. */
  readonly superOptions: string;
}

/** Undoes mountinfo's octal escapes (`\040` for a space, and so on). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Parses /proc/self/mountinfo (see proc(5)); lines it cannot read are skipped. */
export function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const separator = line.indexOf(' - ');
    if (separator < 0) continue;
    const before = line.slice(0, separator).split(' ');
    const after = line.slice(separator + 3).split(' ');
    const mountPoint = before[4];
    const fsType = after[0];
    if (mountPoint === undefined || fsType === undefined) continue;
    entries.push({ mountPoint: unescapeMountPath(mountPoint), fsType, superOptions: after[2] ?? '' });
  }
  return entries;
}

/** The overlay mounts this process can see. Empty where there is no /proc (not Linux). */
export async function readOverlayMounts(): Promise<MountEntry[]> {
  try {
    return parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8')).filter((entry) => entry.fsType === 'overlay');
  } catch {
    return [];
  }
}

/** The value of one option (`upperdir`, `lowerdir`, …) in an overlay's super options, or null. */
export function overlayOption(entry: MountEntry, name: string): string | null {
  const prefix = `${name}=`;
  const found = entry.superOptions.split(',').find((option) => option.startsWith(prefix));
  return found === undefined ? null : found.slice(prefix.length);
}

/**
 * Unmounts every overlay mounted under `dir`, deepest first, so nothing under it is deleted
 * through a mount (the files would go, the mount would stay). Throws when one stays mounted.
 */
export async function unmountOverlaysUnder(dir: string): Promise<void> {
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
