import { homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { bubblewrapArguments, bubblewrapLayout } from './bubblewrap-sandbox.js';
import type { RunCgroups } from '../cgroups/types.js';
import { FALLBACK_PATH, buildCommandEnvironment } from '../process/command-environment.js';
import { formatBytes } from '../process/command-limits.js';
import type { CommandLimits } from '../process/command-limits.js';
import { commandPath, hostLookupFor } from './command-path.js';
import type { CommandPath, HostLookup } from './command-path.js';
import { createConfinedRunner } from './confined-runner.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../process/process-runner.js';
import { CONFINED_HOME, SPILL_MOUNT, existingHiddenPaths } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { harnessNodeBindsFor } from './harness-node.js';
import type { MountLayout } from './mount-layout.js';
import { NOT_STARTED } from '../process/process-runner.js';
import type { RunProcess } from '../process/types.js';
import type { AgentConfinement, Sandbox } from '../types.js';
import { SpillDirectory } from '../process/spill-directory.js';
import { unshareArguments, unshareLayout } from './unshare-sandbox.js';

export interface ConfinedSandboxSettings {
  readonly method: 'bubblewrap' | 'unshare';
  readonly programs: ConfinementPlan['tools'];
  readonly cgroups: RunCgroups;
  readonly limits: CommandLimits;
  /** The uid range and shared gid when the harness is root; null when it is not and commands keep its uid. */
  readonly identity: { readonly uidBase: number; readonly gid: number } | null;
  /** Whether root can cover the private directories on an agent's way in a mount namespace of the command's (see `Sandbox.coversPrivateDirectories`). */
  readonly coverPrivateDirectories: boolean;
  readonly parentEnvironment: Readonly<Record<string, string | undefined>>;
  /** The node executable agents are given when it lies where they cannot go (see `harnessNodeBindsFor`); the harness's own by default. */
  readonly nodeExecutable?: string;
}

/** A confined sandbox and the uid each agent id was given (for the probe and tests). */
export interface ConfinedSandbox {
  readonly sandbox: Sandbox;
  /** The uid and gid commands of `agentId` run as. */
  identityOf(agentId: string): { uid: number; gid: number };
}

export function createConfinedSandbox(settings: ConfinedSandboxSettings): ConfinedSandbox {
  const uids = new Map<string, number>();
  let commandCount = 0;
  const identityOf = (agentId: string): { uid: number; gid: number } => {
    if (settings.identity === null) return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    let uid = uids.get(agentId);
    if (uid === undefined) {
      uid = settings.identity.uidBase + uids.size;
      uids.set(agentId, uid);
    }
    return { uid, gid: settings.identity.gid };
  };
  // A harness that is not root cannot give commands another uid, so they could read whatever
  // it can; its home directory (keys, tokens, other checkouts) is hidden for that reason.
  const alwaysHidden = settings.identity === null ? [homedir()] : [];
  const build = settings.method === 'bubblewrap' ? bubblewrapArguments : unshareArguments;
  const layoutOf = settings.method === 'bubblewrap' ? bubblewrapLayout : unshareLayout;
  const nodeExecutable = settings.nodeExecutable ?? process.execPath;

  const runnerFor = (confinement: AgentConfinement): RunProcess => {
    const identity = settings.identity === null ? null : identityOf(confinement.agentId);
    const lookup = lookupFor(identity);
    const spill = SpillDirectory.open({
      hostDirectory: confinement.spillDir,
      visibleDirectory: SPILL_MOUNT,
      owner: identity,
      maxBytes: settings.limits.maxSpillBytes,
    });
    if (!spill.ok) return async () => ({ ...NOT_STARTED, limits: settings.limits, startError: spill.error });
    const workspace = resolve(confinement.workspace);
    const planWithoutNode: ConfinementPlan = {
      tools: settings.programs,
      identity,
      limits: settings.limits,
      workspace,
      hidden: [...alwaysHidden, ...confinement.hidden],
      binds: confinement.extras?.binds ?? [],
      spillDirectory: resolve(confinement.spillDir),
      shareNetwork: confinement.shareNetwork,
      prelude: confinement.extras?.prelude ?? '',
      coverPrivateDirectories: settings.coverPrivateDirectories && identity !== null,
    };
    const nodeBinds = harnessNodeBindsFor(planWithoutNode, nodeExecutable, layoutOf(planWithoutNode), lookup);
    const plan: ConfinementPlan = nodeBinds.length === 0 ? planWithoutNode : { ...planWithoutNode, binds: [...planWithoutNode.binds, ...nodeBinds] };
    // The agent's mounts are the same for every command it runs: laid out once.
    const layout = layoutOf(plan);
    const slug = confinement.agentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
    const extraEnvironment = confinement.extras?.environment ?? {};
    return createConfinedRunner({
      cgroups: settings.cgroups,
      limits: settings.limits,
      // The process id keeps names apart across processes of one run (a resumed run reopens
      // the run's cgroup): a command never joins a cgroup a killed process left, with its counts.
      nextCgroupName: () => `${slug}-${process.pid}-${(commandCount += 1)}`,
      workspace,
      spill: settings.limits.maxSpillBytes > 0 ? spill.directory : null,
      launch: (request) => {
        const env = confinedEnvironment(settings.parentEnvironment, { ...extraEnvironment, ...request.env });
        // The project's own tools first, as package scripts and `npx` find them: `vitest`, and the package manager a layer installed (`pnpm`).
        env.PATH = `${join(workspace, 'node_modules', '.bin')}:${searchablePath(env.PATH ?? FALLBACK_PATH, layout, lookup)}`;
        return { argv: build(plan, resolve(request.cwd), request.command), env };
      },
    });
  };

  return {
    identityOf,
    sandbox: {
      method: settings.method,
      summary: `${summarize(settings)}; ${describePath(outlinePath(settings, alwaysHidden, nodeExecutable))}`,
      sharedGroup: settings.identity?.gid ?? null,
      coversPrivateDirectories: settings.coverPrivateDirectories && settings.identity !== null,
      runnerFor,
      close: () => settings.cgroups.close(),
    },
  };
}

/**
 * The command's environment: the allowlisted and fixed variables, HOME and TMPDIR on the
 * command's private /tmp, then the caller's. Workspace files belong to another uid than the
 * command's, which git refuses as "dubious ownership"; `safe.directory=*` is passed as
 * command-line configuration (GIT_CONFIG_COUNT), the only scope besides the system and user
 * files that git honours for it. A caller's own GIT_CONFIG_* entries are kept.
 */
export function confinedEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string>>,
): Record<string, string> {
  const environment = buildCommandEnvironment(parent, { HOME: CONFINED_HOME, TMPDIR: '/tmp', ...extra });
  const count = Number(environment.GIT_CONFIG_COUNT ?? '0');
  const index = Number.isInteger(count) && count >= 0 ? count : 0;
  environment[`GIT_CONFIG_KEY_${index}`] = 'safe.directory';
  environment[`GIT_CONFIG_VALUE_${index}`] = '*';
  environment.GIT_CONFIG_COUNT = String(index + 1);
  return environment;
}

/** The harness's user name, or `uid N` when the uid has no entry in the user database. */
export function harnessUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

function summarize(settings: ConfinedSandboxSettings): string {
  const { limits } = settings;
  const who =
    settings.identity === null
      ? `as the harness's own uid ${process.getuid?.() ?? '?'} (${harnessUserName()}; not root, so agents are not separated from each other by uid; its home directory is hidden)`
      : `each agent as its own uid from ${settings.identity.uidBase} (gid ${settings.identity.gid}) with no capabilities`;
  const limitText =
    `${settings.cgroups.version === 1 ? 'cgroup v1' : 'cgroup v2'} limits of ${formatBytes(limits.memoryBytes)} memory and ${limits.maxProcesses} processes per command; ` +
    `per process ${limits.cpuSeconds} s CPU, ${formatBytes(limits.maxFileBytes)} files, ${limits.maxOpenFiles} open files; output past ${formatBytes(DEFAULT_MAX_OUTPUT_BYTES)} spilled to /tmp/colony-output (up to ${formatBytes(limits.maxSpillBytes)})`;
  if (settings.method === 'bubblewrap') {
    return `bubblewrap: commands run ${who}, in a read-only view of the file system with only the workspace writable, a private /tmp, the harness's state and other workspaces hidden, new namespaces and no network unless allowed; ${limitText}`;
  }
  return (
    `unshare (WEAKER than bubblewrap): commands run ${who}, in new pid, mount, IPC and UTS namespaces and no network unless allowed, with a private /tmp and the hidden paths covered, ` +
    `but the rest of the host's file system is visible and WRITABLE wherever file permissions allow; ${limitText}`
  );
}

/**
 * `path` without what the command cannot search (`commandPath`). Should nothing be left, the
 * fallback's searchable part: an empty PATH would have shells look in the working directory.
 */
function searchablePath(path: string, layout: MountLayout, lookup: HostLookup): string {
  const kept = commandPath(path, layout, lookup).path;
  return kept !== '' ? kept : commandPath(FALLBACK_PATH, layout, lookup).path;
}

/** How the command's uid sees the host's files: the agent's own with the shared gid, or the harness's with its groups. */
function lookupFor(identity: { readonly uid: number; readonly gid: number } | null): HostLookup {
  if (identity !== null) return hostLookupFor(identity.uid, [identity.gid]);
  return hostLookupFor(process.getuid?.() ?? 0, [process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])]);
}

/** The harness's PATH as agents' commands get it, and the node directory shown to them, if any. */
interface PathOutline {
  readonly path: CommandPath;
  readonly shownNode: string | null;
}

/**
 * The harness's PATH as every agent's commands share it, for the summary: judged as the first
 * agent's uid, on the host with the paths every command has hidden. What differs from agent to
 * agent (an entry in a workspace, one in the private /tmp) is judged per command.
 */
function outlinePath(settings: ConfinedSandboxSettings, alwaysHidden: readonly string[], nodeExecutable: string): PathOutline {
  const identity = settings.identity === null ? null : { uid: settings.identity.uidBase, gid: settings.identity.gid };
  const lookup = lookupFor(identity);
  const hidden = existingHiddenPaths(alwaysHidden, identity).filter((entry) => entry.kind === 'directory');
  const layout: MountLayout = [{ target: '/', source: '/' }, ...hidden.map((entry) => ({ target: entry.path, source: null }))];
  const coverPrivateDirectories = settings.coverPrivateDirectories && identity !== null;
  const shownNode = harnessNodeBindsFor({ identity, coverPrivateDirectories }, nodeExecutable, layout, lookup)[0]?.target ?? null;
  const path = commandPath(confinedEnvironment(settings.parentEnvironment, {}).PATH ?? '', layout, lookup);
  return { path: { ...path, dropped: path.dropped.filter(({ entry }) => entry !== shownNode) }, shownNode };
}

/** `PATH without A, B (…), node from DIR shown read-only`, or that the PATH is the harness's. */
function describePath(outline: PathOutline): string {
  const unreachable = outline.path.dropped.filter(({ reason }) => reason === 'closed' || reason === 'gone').map(({ entry }) => entry);
  const relative = outline.path.dropped.filter(({ entry, reason }) => reason === 'relative' && entry !== '').map(({ entry }) => entry);
  const parts: string[] = [];
  if (unreachable.length > 0) parts.push(`PATH without ${unreachable.join(', ')} (the agents cannot reach ${unreachable.length === 1 ? 'it' : 'them'})`);
  if (relative.length > 0) parts.push(`${unreachable.length === 0 ? 'PATH without ' : ''}the relative ${relative.join(', ')}`);
  if (outline.shownNode !== null) parts.push(`node from ${outline.shownNode} shown read-only`);
  return parts.length === 0 ? "PATH as the harness's" : parts.join(', ');
}
