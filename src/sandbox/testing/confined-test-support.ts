import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCgroupSources, resolveCgroupLayout, v1Hierarchies } from '../cgroups/cgroup-layout.js';
import { isOwnerMarker } from '../cgroups/cgroup-sweep.js';
import { processRunCgroupName } from '../cgroups/cgroups.js';
import { defaultProgramDirectories, findProgram } from '../sandbox-programs.js';
import { DEFAULT_SANDBOX_GID, openSandbox } from '../sandbox.js';
import type { CommandLimits } from '../process/command-limits.js';
import type { Sandbox, SandboxMethod } from '../types.js';

/** Limits small enough that the resource tests finish in seconds. */
export const TEST_LIMITS: Partial<CommandLimits> = {
  memoryBytes: 128 * 1024 ** 2,
  maxProcesses: 64,
  cpuSeconds: 1,
  maxFileBytes: 10 * 1024 ** 2,
  maxSpillBytes: 1024 ** 2,
};

/**
 * Why the confined tests cannot run on this machine, or null when they can: they need Linux,
 * root (to give commands another uid and to make cgroups), the programs of `method`, and the
 * memory and pids cgroup controllers. With COLONY_REQUIRE_SANDBOX_TESTS=1 (set by CI) a
 * missing need is not a reason to skip: the tests run and fail, so CI cannot pass by skipping.
 * The suite says once, at its start, what was skipped and what to install (test/global-setup.ts).
 */
export function confinedTestsUnavailable(method: Exclude<SandboxMethod, 'none'> = 'bubblewrap'): string | null {
  if (process.env.COLONY_REQUIRE_SANDBOX_TESTS === '1') return null;
  return missingConfinementNeed(method);
}

/** What this machine lacks to confine commands with `method`, or null when it has it all. */
export function missingConfinementNeed(method: Exclude<SandboxMethod, 'none'>): string | null {
  if (process.platform !== 'linux') return 'they need Linux';
  if (process.getuid?.() !== 0) return 'they need root, to run commands as other uids and to make cgroups';
  const programs = method === 'bubblewrap' ? ['bwrap', 'setpriv', 'prlimit'] : ['unshare', 'setpriv', 'prlimit', 'mount', 'ip'];
  const missing = programs.filter((name) => findProgram(name, defaultProgramDirectories()) === null);
  if (missing.length > 0) return `they need ${missing.join(', ')} (apt-get install ${method === 'bubblewrap' ? 'bubblewrap ' : 'iproute2 '}util-linux)`;
  const layout = resolveCgroupLayout(readCgroupSources());
  return layout.ok ? null : `they need cgroups: ${layout.error}`;
}

/** Opens a sandbox for a test file; each file passes its own uid base so parallel files never share a uid. */
export async function openTestSandbox(options: {
  method?: Exclude<SandboxMethod, 'none'>;
  runId: string;
  uidBase: number;
  limits?: Partial<CommandLimits>;
  parentEnvironment?: Readonly<Record<string, string | undefined>>;
  nodeExecutable?: string;
}): Promise<Sandbox> {
  const opening = await openSandbox({
    method: options.method ?? 'bubblewrap',
    runId: `${options.runId}-${process.pid}`,
    uidBase: options.uidBase,
    limits: { ...TEST_LIMITS, ...options.limits },
    ...(options.parentEnvironment === undefined ? {} : { parentEnvironment: options.parentEnvironment }),
    ...(options.nodeExecutable === undefined ? {} : { nodeExecutable: options.nodeExecutable }),
  });
  if (!opening.ok) throw new Error(`the sandbox did not open: ${opening.error} (fix: ${opening.fix})`);
  return opening.sandbox;
}

/** A temporary directory every uid may enter (mode 0755), for workspaces and spill directories. */
export function makeTestRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(root, 0o755);
  return root;
}

/** A workspace the sandbox gid may write, as the harness will make them: group-owned, g+w, setgid. */
export function makeWorkspace(path: string): string {
  mkdirSync(path, { recursive: true });
  prepareWorkspace(path);
  return path;
}

export function prepareWorkspace(path: string): void {
  chownSync(path, 0, DEFAULT_SANDBOX_GID);
  chmodSync(path, 0o2770);
}

/** Whether this machine's cgroups count a command's CPU (cgroup v2, or v1 with cpuacct mounted). */
export function commandCpuCounted(): boolean {
  const layout = resolveCgroupLayout(readCgroupSources());
  return layout.ok && (layout.layout.version === 2 || layout.layout.cpuacct !== null);
}

/** Live processes (zombies excluded) whose real uid is `uid`. */
export function processesOf(uid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      const state = /^State:\s+(\w)/m.exec(status)?.[1];
      if (realUid === String(uid) && state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // Exited while being read.
    }
  }
  return found;
}

/** Waits until no live process runs as `uid`; the processes still there at the deadline. */
export async function leftoverProcessesOf(uid: number, deadlineMs = 5_000): Promise<number[]> {
  for (let waited = 0; waited < deadlineMs; waited += 20) {
    if (processesOf(uid).length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return processesOf(uid);
}

/** Command cgroups still present under the run's parent in any hierarchy (none once every command has ended); the owner child is not one. */
export function leftoverCommandCgroups(runId: string): string[] {
  const layout = resolveCgroupLayout(readCgroupSources());
  if (!layout.ok) return [];
  const parents = layout.layout.version === 1 ? v1Hierarchies(layout.layout) : [layout.layout.own];
  const name = processRunCgroupName(`${runId}-${process.pid}`);
  return parents.flatMap((parent) => {
    const run = join(parent, name);
    if (!existsSync(run)) return [];
    return readdirSync(run, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !isOwnerMarker(entry.name))
      .map((entry) => join(run, entry.name));
  });
}

/** The run's parent cgroups still present (none after the sandbox is closed). */
export function runCgroupsLeft(runId: string): string[] {
  const layout = resolveCgroupLayout(readCgroupSources());
  if (!layout.ok) return [];
  const parents = layout.layout.version === 1 ? v1Hierarchies(layout.layout) : [layout.layout.own];
  const name = processRunCgroupName(`${runId}-${process.pid}`);
  return parents.map((parent) => join(parent, name)).filter((path) => existsSync(path));
}
