import { statSync } from 'node:fs';
import { chmod, chown, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import type { SandboxSettings } from '../../events/run-settings.js';
import { runProcess } from '../../sandbox/process/process-runner.js';
import { type RunProcess } from '../../sandbox/process/types.js';
import { DEFAULT_SANDBOX_GID, DEFAULT_SANDBOX_UID_BASE, openSandbox } from '../../sandbox/sandbox.js';
import { type ConfinementExtras, type Sandbox, type SandboxMethod } from '../../sandbox/types.js';
import type { NetworkPolicy } from '../../sandbox/network/network-policy.js';
import { startEgressProxy, type EgressProxy } from '../../sandbox/network/egress-proxy.js';
import { egressBridgeExtras, findSocat } from '../../sandbox/network/egress-bridge.js';
import { shareDirectoryWithGroup } from '../../workspace/files/group-access.js';
import { writeSandboxGitConfig } from './sandbox-git-config.js';
import type { Repository } from '../../workspace/git/repository.js';
import { errorMessage } from '../../errors/error-message.js';

/** How the user asked for agents' commands to be confined (`--sandbox`, `--network`, `--command-*`). */
/** The run's way of running agents' commands: one confined runner per agent and directory. */
export interface CommandRunners {
  readonly method: SandboxMethod;
  /** A runner for the commands one agent runs in `dir` (its workspace, or a planner's view of main). */
  forAgent(agentId: string, dir: string): RunProcess;
  /**
   * A runner for the shared dependency install in `dir`: confined like an agent, but with the
   * network. With `registriesOnly` (npm's, pnpm's and yarn's installs) only the package
   * registries the setup network names, through a proxy that records each request; otherwise
   * (a project's own setup, or no proxy here) the host's.
   */
  forInstall(dir: string, registriesOnly: boolean): RunProcess;
  /** The gid confined commands run with when they run as other uids, else null (see `Sandbox.sharedGroup`). */
  readonly sharedGroup: number | null;
  /** Stops the network proxy, removes the run's cgroups and gives the process its umask back; call once every agent has ended. Later calls do nothing. */
  close(): Promise<void>;
}

export interface OpenCommandRunnersOptions {
  readonly settings: SandboxSettings;
  readonly runId: string;
  readonly repo: Repository;
  readonly stateDir: string;
  /** Directories the harness makes workspaces and views in; commands must be able to write what is made there. */
  readonly workDirs: readonly string[];
  readonly record: (event: EventBody) => void;
  /**
   * The worker host these runners are for (`colony worker --name`): its agents get uids and a
   * group of their own, apart from the run's own process and other hosts on the same machine.
   */
  readonly host?: string | undefined;
}

export type OpenedCommandRunners = { readonly ok: true; readonly runners: CommandRunners } | { readonly ok: false; readonly error: string };

/**
 * Opens the sandbox the user chose and fails closed: when it cannot confine commands here, the
 * run does not start, and the error names the fix and the explicit way out (`--sandbox none`).
 * Agents never choose: nothing a model sends reaches these settings.
 */
export async function openCommandRunners(options: OpenCommandRunnersOptions): Promise<OpenedCommandRunners> {
  const { settings } = options;
  const opened = await openSandbox({
    method: settings.method,
    runId: options.runId,
    ...runIdentities(options.host === undefined ? options.runId : `${options.runId}/${options.host}`),
    limits: settings.limits,
  });
  if (!opened.ok) {
    return {
      ok: false,
      error:
        `cannot confine agents' commands here: ${opened.error}\n` +
        `To fix it: ${opened.fix}\n` +
        'Or, to run every command an agent writes unconfined, with your own permissions, pass --sandbox none.',
    };
  }
  const sandbox = opened.sandbox;
  if (sandbox.sharedGroup !== null) {
    const blocked = agentBlockedAt(sandbox.sharedGroup, options.stateDir, options.repo.gitDir, sandbox.coversPrivateDirectories);
    if (blocked !== null) {
      await sandbox.close();
      const problem = blockedPathProblem(blocked, sandbox.coversPrivateDirectories);
      return { ok: false, error: `cannot confine agents' commands here: ${problem.error}.\nTo fix it: ${problem.fix}.` };
    }
  }
  let proxy: EgressProxy | null = null;
  let setupProxy: EgressProxy | null = null;
  let setupNetwork: string = describeNetwork(settings.setupNetwork);
  let heldUmask = false;
  let gitConfig: string | null;
  try {
    if (sandbox.sharedGroup !== null) {
      // Commands run under other uids in the sandbox's group: what the harness makes for them
      // (checkouts, overlay layers, files its tools write) must be group-writable.
      holdGroupUmask();
      heldUmask = true;
      await closeToOtherRuns(options.stateDir, sandbox.sharedGroup);
      for (const dir of options.workDirs) await shareDirectoryWithGroup(dir, sandbox.sharedGroup);
    }
    gitConfig = await writeSandboxGitConfig(options.repo.gitDir, options.stateDir);
    if (settings.network.kind === 'hosts') {
      const socat = await findSocat();
      if (!socat.ok) throw new Error(socat.error);
      const started = await startEgressProxy({
        hosts: settings.network.hosts,
        directory: join(options.stateDir, 'egress'),
        onDecision: ({ host, port, allowed }) => options.record({ type: 'network.requested', data: { host, port, allowed } }),
      });
      if (!started.ok) throw new Error(started.error);
      proxy = started.proxy;
    }
    if (settings.setupNetwork.kind === 'hosts' && sandbox.method !== 'none') {
      const socat = await findSocat();
      if (socat.ok) {
        const started = await startEgressProxy({
          hosts: settings.setupNetwork.hosts,
          directory: join(options.stateDir, 'egress-setup'),
          onDecision: ({ host, port, allowed }) => options.record({ type: 'network.requested', data: { host, port, allowed, setup: true } }),
        });
        if (!started.ok) throw new Error(started.error);
        setupProxy = started.proxy;
      } else {
        // The install still works with the host's network; only the narrowing and the record are lost.
        setupNetwork = `all (the proxy that would narrow it cannot start: ${socat.error})`;
      }
    }
  } catch (error) {
    if (heldUmask) releaseGroupUmask();
    await proxy?.close();
    await setupProxy?.close();
    await sandbox.close();
    return { ok: false, error: `could not prepare the sandbox: ${errorMessage(error)}` };
  }
  options.record({ type: 'sandbox.opened', data: { method: sandbox.method, summary: sandbox.summary, network: describeNetwork(settings.network), setupNetwork } });
  const releaseUmask = heldUmask;
  const openProxy = proxy;
  const openSetupProxy = setupProxy;
  let closing: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    await openProxy?.close();
    await openSetupProxy?.close();
    await sandbox.close();
    if (releaseUmask) releaseGroupUmask();
  };
  const proxies = { agents: proxy, setup: setupProxy };
  return { ok: true, runners: createRunners(sandbox, settings.network, proxies, gitConfig, options, () => (closing ??= close())) };
}

function createRunners(
  sandbox: Sandbox,
  network: NetworkPolicy,
  proxies: { readonly agents: EgressProxy | null; readonly setup: EgressProxy | null },
  gitConfig: string | null,
  options: OpenCommandRunnersOptions,
  close: () => Promise<void>,
): CommandRunners {
  const bridgeTo = (proxy: EgressProxy | null) => (proxy === null ? null : egressBridgeExtras({ proxySocketPath: proxy.socketPath }));
  const [agentBridge, setupBridge] = [bridgeTo(proxies.agents), bridgeTo(proxies.setup)];
  /** A runner with the host's network (`bridge` null and shared), or none but the bridge to a proxy. */
  const runner = (agentId: string, dir: string, shareNetwork: boolean, bridge: ConfinementExtras | null): RunProcess =>
    sandbox.runnerFor({
      agentId,
      workspace: dir,
      hidden: [options.stateDir],
      spillDir: join(options.stateDir, 'output', agentId),
      shareNetwork,
      extras: commandExtras(options.repo, gitConfig, shareNetwork ? null : bridge, !shareNetwork && bridge === null),
    });
  return {
    method: sandbox.method,
    sharedGroup: sandbox.sharedGroup,
    forAgent: (agentId, dir) => runner(agentId, dir, network.kind === 'all', agentBridge),
    forInstall: (dir, registriesOnly) => (registriesOnly && setupBridge !== null ? runner('dependencies', dir, false, setupBridge) : runner('dependencies', dir, true, null)),
    close,
  };
}

/**
 * What every confined command gets besides its workspace: the repository's git directory to
 * read (a workspace's `.git` file points there, and it may lie under a directory the sandbox
 * replaces, such as `/tmp`) with its config shown without credentials, and the network bridge
 * when hosts are allowed.
 */
function commandExtras(repo: Repository, gitConfig: string | null, bridge: ConfinementExtras | null, offline: boolean): ConfinementExtras {
  return {
    binds: [
      { source: repo.gitDir, target: repo.gitDir, writable: false },
      ...(gitConfig === null ? [] : [{ source: gitConfig, target: join(repo.gitDir, 'config'), writable: false }]),
      ...(bridge?.binds ?? []),
    ],
    prelude: bridge?.prelude ?? '',
    environment: { ...(offline ? OFFLINE_ENVIRONMENT : {}), ...bridge?.environment },
  };
}

/**
 * Package managers' retries for commands without any network: npm would try a registry it
 * cannot resolve again and again for about 70 s before it says `EAI_AGAIN`; with no retries it
 * says so at once.
 */
const OFFLINE_ENVIRONMENT: Readonly<Record<string, string>> = { npm_config_fetch_retries: '0', PIP_RETRIES: '0' };

function describeNetwork(network: NetworkPolicy): string {
  if (network.kind === 'none') return 'none';
  if (network.kind === 'all') return 'all';
  return `only ${network.hosts.join(', ')}`;
}

/** A record function usable before the run's recorder exists: what comes early waits, in order, until `attach`. */
export interface LateRecorder {
  record(event: EventBody): void;
  attach(record: (event: EventBody) => void): void;
}

export function lateRecorder(): LateRecorder {
  const waiting: EventBody[] = [];
  let target: ((event: EventBody) => void) | null = null;
  return {
    record: (event) => {
      if (target === null) waiting.push(event);
      else target(event);
    },
    attach: (record) => {
      target = record;
      for (const event of waiting.splice(0)) record(event);
    },
  };
}

/**
 * Runners that run every command unconfined, with the harness's own permissions, as
 * `--sandbox none` does; for callers that hold no sandbox (tests of the orchestration itself).
 */
export function unconfinedCommandRunners(): CommandRunners {
  return { method: 'none', sharedGroup: null, forAgent: () => runProcess, forInstall: () => runProcess, close: async () => undefined };
}

/**
 * The paths agents running as other uids must get through to: every directory above the state
 * directory (the state directory itself is colony's, and opened to the run's group), and the
 * repository's git directory, which every workspace reads.
 */
export function agentPathsOf(stateDir: string, gitDir: string): string[] {
  return [dirname(stateDir), gitDir];
}

/**
 * The first directory that keeps agents running as other uids (in group `gid`) from what they
 * need, or null. Where the sandbox covers private directories (`Sandbox.coversPrivateDirectories`:
 * root shows each agent the way through in a mount namespace of the command's own), a directory
 * above the state directory or the repository no longer stops them; only the git directory
 * itself, which they must enter and read, still can. Elsewhere every directory on the way counts.
 */
export function agentBlockedAt(gid: number | null, stateDir: string, gitDir: string, coversPrivateDirectories: boolean): string | null {
  if (coversPrivateDirectories) return unreachableFor(gid, [gitDir], false);
  return unreachableFor(gid, agentPathsOf(stateDir, gitDir));
}

/**
 * The first directory on the way to any of `paths` (themselves included; only themselves when
 * `ancestors` is false) that a process in group `gid` may not enter, or null when every one of
 * them lets it through. bubblewrap opens what it binds as the agent's uid, so a private home
 * (mode 0700) above a repository stops it unless the sandbox covers it. With `gid` null (a
 * run's group is its own, unknown before it starts), only `o+x` lets through.
 */
export function unreachableFor(gid: number | null, paths: readonly string[], ancestors = true): string | null {
  for (const path of paths) {
    for (let dir = path; ; dir = dirname(dir)) {
      const info = statOrNull(dir);
      if (info !== null && (info.mode & 0o001) === 0 && !(gid !== null && info.gid === gid && (info.mode & 0o010) !== 0)) return dir;
      if (!ancestors || dirname(dir) === dir) break;
    }
  }
  return null;
}

/**
 * What a directory agents cannot get through costs, and the fix, each a clause without its full
 * stop. Where the sandbox covers private directories, the only one left is the git directory
 * itself; elsewhere it is one above what they need, which the sandbox could not cover here.
 */
export function blockedPathProblem(blocked: string, coversPrivateDirectories = false): { error: string; fix: string } {
  if (coversPrivateDirectories) {
    return {
      error: `the agents run as other users, who may not enter the repository's git directory ${blocked} (only its owner may), and every workspace reads it`,
      fix: `let others in with \`chmod o+rx ${blocked}\`, or keep the repository somewhere they can read`,
    };
  }
  return {
    error:
      `the agents run as other users, who cannot get through ${blocked} (only its owner may enter it), so they could not reach their workspaces or the repository; ` +
      'colony shows them the way through such a directory only as root where it can make a mount namespace of its own, which it cannot here',
    fix: `let others through it with \`chmod o+x ${blocked}\` (they still cannot list or read what is inside), or keep the repository and --state somewhere they can reach`,
  };
}

function statOrNull(path: string): { mode: number; gid: number } | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** How many uids each run's agents may take before they would reach the next range. */
const UIDS_PER_RUN = 1_000;
// uids and gids stay below 2^31: bubblewrap cannot map larger ones.
const RUN_RANGES = 100_000;

/**
 * A gid and a range of uids of this run's own, from its id, so two runs on one machine (each
 * with its own state directory) share neither: one run's agents cannot enter the other's
 * state directory, which only its own group may (see `closeToOtherRuns`).
 */
export function runIdentities(runId: string): { gid: number; uidBase: number } {
  const slot = createHash('sha256').update(runId).digest().readUInt32BE(0) % RUN_RANGES;
  return { gid: DEFAULT_SANDBOX_GID + 1 + slot, uidBase: DEFAULT_SANDBOX_UID_BASE + slot * UIDS_PER_RUN };
}

/**
 * The state directory holds the event log, every workspace and every agent's spill files.
 * Its own agents see it hidden; agents of any other run on the machine are kept out by its
 * mode: owner, and this run's group to pass through (mode 0710), nobody else.
 */
async function closeToOtherRuns(stateDir: string, gid: number): Promise<void> {
  const info = await stat(stateDir);
  if (info.gid !== gid) await chown(stateDir, -1, gid);
  await chmod(stateDir, (info.mode & 0o700) | 0o010);
}

/** How many open runs in this process need umask 002, and the umask the process had before the first. */
let groupUmaskHolds = 0;
let umaskBeforeHolds = 0o022;

function holdGroupUmask(): void {
  if (groupUmaskHolds === 0) umaskBeforeHolds = process.umask(0o002);
  groupUmaskHolds += 1;
}

function releaseGroupUmask(): void {
  groupUmaskHolds -= 1;
  if (groupUmaskHolds === 0) process.umask(umaskBeforeHolds);
}

/**
 * The umask of the person who started colony, whether or not runs hold the process at 002
 * for their sandboxes: what files in the user's own checkout are made with.
 */
export function ownerUmask(): number {
  return groupUmaskHolds > 0 ? umaskBeforeHolds : process.umask();
}
