import { homedir, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { bubblewrapArguments } from './bubblewrap-sandbox.js';
import type { RunCgroups } from '../cgroups/types.js';
import { buildCommandEnvironment } from '../process/command-environment.js';
import { formatBytes } from '../process/command-limits.js';
import type { CommandLimits } from '../process/command-limits.js';
import { createConfinedRunner } from './confined-runner.js';
import { CONFINED_HOME, SPILL_MOUNT } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { NOT_STARTED } from '../process/process-runner.js';
import type { RunProcess } from '../process/types.js';
import type { AgentConfinement, Sandbox } from '../types.js';
import { SpillDirectory } from '../process/spill-directory.js';
import { unshareArguments } from './unshare-sandbox.js';

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

  const runnerFor = (confinement: AgentConfinement): RunProcess => {
    const identity = settings.identity === null ? null : identityOf(confinement.agentId);
    const spill = SpillDirectory.open({
      hostDirectory: confinement.spillDir,
      visibleDirectory: SPILL_MOUNT,
      owner: identity,
      maxBytes: settings.limits.maxSpillBytes,
    });
    if (!spill.ok) return async () => ({ ...NOT_STARTED, limits: settings.limits, startError: spill.error });
    const workspace = resolve(confinement.workspace);
    const plan: ConfinementPlan = {
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
    const slug = confinement.agentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
    const extraEnvironment = confinement.extras?.environment ?? {};
    const build = settings.method === 'bubblewrap' ? bubblewrapArguments : unshareArguments;
    return createConfinedRunner({
      cgroups: settings.cgroups,
      limits: settings.limits,
      // The process id keeps names apart across processes of one run (a resumed run reopens
      // the run's cgroup): a command never joins a cgroup a killed process left, with its counts.
      nextCgroupName: () => `${slug}-${process.pid}-${(commandCount += 1)}`,
      workspace,
      spill: settings.limits.maxSpillBytes > 0 ? spill.directory : null,
      launch: (request) => ({
        argv: build(plan, resolve(request.cwd), request.command),
        env: confinedEnvironment(settings.parentEnvironment, { ...extraEnvironment, ...request.env }),
      }),
    });
  };

  return {
    identityOf,
    sandbox: {
      method: settings.method,
      summary: summarize(settings),
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
    `per process ${limits.cpuSeconds} s CPU, ${formatBytes(limits.maxFileBytes)} files, ${limits.maxOpenFiles} open files; output past 64 KB spilled to /tmp/colony-output (up to ${formatBytes(limits.maxSpillBytes)})`;
  if (settings.method === 'bubblewrap') {
    return `bubblewrap: commands run ${who}, in a read-only view of the file system with only the workspace writable, a private /tmp, the harness's state and other workspaces hidden, new namespaces and no network unless allowed; ${limitText}`;
  }
  return (
    `unshare (WEAKER than bubblewrap): commands run ${who}, in new pid, mount, IPC and UTS namespaces and no network unless allowed, with a private /tmp and the hidden paths covered, ` +
    `but the rest of the host's file system is visible and WRITABLE wherever file permissions allow; ${limitText}`
  );
}
