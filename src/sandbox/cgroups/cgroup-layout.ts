import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * Where this process's own cgroups are, as directories: per controller on cgroup v1, one
 * directory on cgroup v2. A run's cgroups are made under these, never elsewhere, so colony
 * stays inside whatever limits and delegation it was started with.
 */
export type CgroupLayout =
  | {
      readonly version: 1;
      readonly memory: string;
      readonly pids: string;
      readonly freezer: string;
      /** The cpuacct hierarchy, where commands' CPU time is counted; null when it is not mounted. */
      readonly cpuacct: string | null;
    }
  | { readonly version: 2; readonly own: string };

/** The v1 hierarchies a run's cgroups are made in, in the order a run's directories list them. */
export function v1Hierarchies(layout: Extract<CgroupLayout, { version: 1 }>): string[] {
  return layout.cpuacct === null ? [layout.memory, layout.pids, layout.freezer] : [layout.memory, layout.pids, layout.freezer, layout.cpuacct];
}

/** The two texts the layout is read from: `/proc/self/cgroup` and `/proc/self/mountinfo`. */
export interface CgroupSources {
  readonly procSelfCgroup: string;
  readonly mountInfo: string;
}

export function readCgroupSources(): CgroupSources {
  return { procSelfCgroup: readFileSync('/proc/self/cgroup', 'utf8'), mountInfo: readFileSync('/proc/self/mountinfo', 'utf8') };
}

interface CgroupMount {
  readonly type: 'cgroup' | 'cgroup2';
  /** The cgroup the mount shows at its mount point (not `/` when a container bind-mounts a subtree). */
  readonly root: string;
  readonly mountPoint: string;
  /** v1 only: the controllers bound to this hierarchy. */
  readonly controllers: readonly string[];
}

const V1_CONTROLLERS = ['memory', 'pids', 'freezer', 'cpuacct'] as const;

/**
 * The layout, or why no usable one exists. cgroup v1 is used when memory, pids and freezer
 * are all mounted as v1 hierarchies (a hybrid system keeps them there and leaves the v2
 * mount without controllers), with cpuacct when it is mounted too; otherwise the v2 mount is used and its controllers are checked
 * when the run's cgroup is made.
 */
export function resolveCgroupLayout(sources: CgroupSources): { ok: true; layout: CgroupLayout } | { ok: false; error: string } {
  const mounts = parseMountInfo(sources.mountInfo);
  const membership = parseProcSelfCgroup(sources.procSelfCgroup);
  const v1: Partial<Record<(typeof V1_CONTROLLERS)[number], string>> = {};
  for (const controller of V1_CONTROLLERS) {
    const mount = mounts.find((candidate) => candidate.type === 'cgroup' && candidate.controllers.includes(controller));
    const path = membership.v1.get(controller);
    const directory = mount === undefined || path === undefined ? null : directoryOf(mount, path);
    if (directory !== null) v1[controller] = directory;
  }
  if (v1.memory !== undefined && v1.pids !== undefined && v1.freezer !== undefined) {
    return { ok: true, layout: { version: 1, memory: v1.memory, pids: v1.pids, freezer: v1.freezer, cpuacct: v1.cpuacct ?? null } };
  }
  const unified = mounts.find((candidate) => candidate.type === 'cgroup2');
  const own = unified === undefined || membership.v2 === null ? null : directoryOf(unified, membership.v2);
  if (own !== null && v1.memory === undefined && v1.pids === undefined) return { ok: true, layout: { version: 2, own } };
  const found = Object.keys(v1).filter((controller) => controller !== 'cpuacct');
  return {
    ok: false,
    error:
      found.length > 0
        ? `cgroup v1 is mounted with only ${found.join(', ')} of the memory, pids and freezer controllers colony needs`
        : 'no cgroup file system with the memory and pids controllers is mounted (looked for cgroup v1 and v2 in /proc/self/mountinfo)',
  };
}

/** Mount lines for cgroup file systems. Fields: id parent dev root mountpoint options [optional…] - type source superoptions. */
function parseMountInfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 6) continue;
    const type = fields[separator + 1];
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    const superOptions = (fields[separator + 3] ?? '').split(',');
    mounts.push({
      type,
      root: unescapeMountField(fields[3] ?? '/'),
      mountPoint: unescapeMountField(fields[4] ?? ''),
      controllers: type === 'cgroup' ? superOptions : [],
    });
  }
  return mounts;
}

/** `/proc/self/cgroup`: `id:controller,controller:/path` per v1 hierarchy, `0::/path` for v2. */
function parseProcSelfCgroup(text: string): { v1: Map<string, string>; v2: string | null } {
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (line.slice(0, first) === '0' && controllers === '') v2 = path;
    else for (const controller of controllers.split(',')) v1.set(controller, path);
  }
  return { v1, v2 };
}

/**
 * The directory of cgroup `path` under `mount`, which shows the hierarchy from `mount.root`
 * down; null when the process's cgroup lies outside what the mount shows.
 */
function directoryOf(mount: CgroupMount, path: string): string | null {
  const relative = mount.root === '/' ? path : posix.relative(mount.root, path);
  if (relative === '..' || relative.startsWith('../')) return null;
  const directory = join(mount.mountPoint, relative);
  return directory.length > 1 ? directory.replace(/\/+$/, '') : directory;
}

/** mountinfo escapes space, tab, newline and backslash as three octal digits. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
