import { resolveCgroupLayout, readCgroupSources } from './cgroups/cgroup-layout.js';
import type { CgroupSources } from './cgroups/cgroup-layout.js';
import { openRunCgroups } from './cgroups/cgroups.js';
import { resolveCommandLimits } from './process/command-limits.js';
import type { CommandLimitOverrides, CommandLimits } from './process/command-limits.js';
import { createConfinedSandbox, harnessUserName } from './confinement/confined-sandbox.js';
import { createLocalProcessRunner } from './process/process-runner.js';
import { CGROUP_FIX, probeConfinedSandbox, probeMountNamespace } from './sandbox-probe.js';
import { defaultProgramDirectories, findProgram, findPrograms } from './sandbox-programs.js';
import { SpillDirectory } from './process/spill-directory.js';
import type { Sandbox, SandboxMethod } from './types.js';


export type SandboxOpening = { ok: true; sandbox: Sandbox } | { ok: false; error: string; fix: string };

export interface OpenSandboxOptions {
  readonly method: SandboxMethod;
  readonly limits?: CommandLimitOverrides | undefined;
  /** Names the run's parent cgroup, `colony-<runId>`. */
  readonly runId: string;
  /** Testing seam: `/proc/self/cgroup` and `/proc/self/mountinfo` as text, e.g. pointing at a fake cgroup root. */
  readonly cgroupSources?: CgroupSources;
  /** The first agent's uid when the harness is root; each agent gets the next. Default 2000000001. */
  readonly uidBase?: number;
  /** The gid every agent shares, to which workspaces are made group-writable. Default 2000000000. */
  readonly gid?: number;
  /** Testing seam: where bwrap, setpriv, prlimit, unshare, mount and ip are looked for. Default PATH and the usual places. */
  readonly programDirectories?: readonly string[];
  /** Where the allowlisted variables (PATH, LANG…) are read from; default process.env. */
  readonly parentEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Testing seam: the node executable shown to agents when it lies where their uids cannot go; default the harness's own (process.execPath). */
  readonly nodeExecutable?: string;
}

export const DEFAULT_SANDBOX_UID_BASE = 2_000_000_001;
export const DEFAULT_SANDBOX_GID = 2_000_000_000;

/**
 * Opens the sandbox a run's commands go through. For `bubblewrap` and `unshare` it checks
 * the programs, makes the run's cgroups and then probes for real: one command through the
 * whole chain must run as the agent's uid, be unable to write outside its workspace (with
 * bubblewrap) and able to write inside it. Anything short of that fails closed, with the
 * problem and a fix a person can act on; nothing is left behind then.
 */
export async function openSandbox(options: OpenSandboxOptions): Promise<SandboxOpening> {
  const limits = resolveCommandLimits(options.limits);
  if (!limits.ok) return { ok: false, error: limits.error, fix: 'pass limits that are whole numbers at or above the minimum named' };
  const parentEnvironment = options.parentEnvironment ?? process.env;
  if (options.method === 'none') return { ok: true, sandbox: unconfinedSandbox(limits.limits, parentEnvironment) };
  if (process.platform !== 'linux') {
    return { ok: false, error: `the ${options.method} sandbox needs Linux; this is ${process.platform}`, fix: 'run colony on Linux, or choose --sandbox none to run commands unconfined' };
  }
  const root = process.getuid?.() === 0;
  if (options.method === 'unshare' && !root) {
    return {
      ok: false,
      error: 'the unshare sandbox needs root: it switches each agent to its own uid and mounts in a new namespace',
      fix: 'run colony as root, or use --sandbox bubblewrap, which works without root',
    };
  }
  const names = options.method === 'bubblewrap' ? (['bwrap', 'setpriv', 'prlimit'] as const) : (['unshare', 'setpriv', 'prlimit', 'mount', 'ip'] as const);
  const directories = options.programDirectories ?? defaultProgramDirectories(parentEnvironment);
  const found = findPrograms(names, directories);
  if (!found.ok) return found;
  const layout = resolveCgroupLayout(options.cgroupSources ?? readCgroupSources());
  if (!layout.ok) return { ok: false, error: layout.error, fix: CGROUP_FIX };
  const cgroups = openRunCgroups(layout.layout, options.runId);
  if (!cgroups.ok) return { ok: false, error: cgroups.error, fix: CGROUP_FIX };
  const located: Readonly<Record<string, string>> = found.programs;
  const programs = {
    bwrap: located.bwrap ?? '',
    setpriv: located.setpriv ?? '',
    prlimit: located.prlimit ?? '',
    // bubblewrap needs these two only to cover private directories (root only), so it runs without them.
    unshare: located.unshare ?? findProgram('unshare', directories) ?? '',
    mount: located.mount ?? findProgram('mount', directories) ?? '',
    ip: located.ip ?? '',
  };
  const confined = createConfinedSandbox({
    method: options.method,
    programs,
    cgroups: cgroups.cgroups,
    limits: limits.limits,
    identity: root ? { uidBase: options.uidBase ?? DEFAULT_SANDBOX_UID_BASE, gid: options.gid ?? DEFAULT_SANDBOX_GID } : null,
    // The unshare fallback's probe has just run the whole chain in a mount namespace of root's.
    coverPrivateDirectories: root && (options.method === 'unshare' || probeMountNamespace(programs) === null),
    parentEnvironment,
    ...(options.nodeExecutable === undefined ? {} : { nodeExecutable: options.nodeExecutable }),
  });
  const probe = await probeConfinedSandbox(confined, options.method);
  if (probe !== null) {
    await confined.sandbox.close();
    return { ok: false, ...probe };
  }
  return { ok: true, sandbox: confined.sandbox };
}

/**
 * `none`: the local runner, with spill files, and no confinement at all. The prelude is not
 * run: it sets up what a confinement takes away, and an unconfined command has all of it.
 */
function unconfinedSandbox(limits: CommandLimits, parentEnvironment: Readonly<Record<string, string | undefined>>): Sandbox {
  const user = harnessUserName();
  return {
    method: 'none',
    sharedGroup: null,
    coversPrivateDirectories: false,
    summary: `commands are NOT confined: they run as ${user} with the harness's file system, network and permissions; only their environment is cleared and their output capped`,
    runnerFor: (confinement) => {
      const spill = SpillDirectory.open({ hostDirectory: confinement.spillDir, visibleDirectory: confinement.spillDir, owner: null, maxBytes: limits.maxSpillBytes });
      const local = createLocalProcessRunner({ parentEnvironment, ...(spill.ok && limits.maxSpillBytes > 0 ? { spill: spill.directory } : {}) });
      const environment = confinement.extras?.environment ?? {};
      return (request) => local({ ...request, env: { ...environment, ...request.env } });
    },
    close: async () => undefined,
  };
}
