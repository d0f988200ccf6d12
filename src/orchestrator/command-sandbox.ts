import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EventBody } from '../events/event-types.js';
import { runProcess, type RunProcess } from '../sandbox/process-runner.js';
import { openSandbox, type CommandLimits, type ConfinementExtras, type Sandbox, type SandboxMethod } from '../sandbox/sandbox.js';
import type { NetworkPolicy } from '../sandbox/network-policy.js';
import { startEgressProxy, type EgressProxy } from '../sandbox/egress-proxy.js';
import { egressBridgeExtras } from '../sandbox/egress-bridge.js';
import { shareDirectoryWithGroup } from '../workspace/group-access.js';
import type { Repository } from '../workspace/repository.js';

/** How the user asked for agents' commands to be confined (`--sandbox`, `--network`, `--command-*`). */
export interface SandboxSettings {
  readonly method: SandboxMethod;
  readonly network: NetworkPolicy;
  readonly limits?: Partial<CommandLimits>;
}

/** Confined by bubblewrap, with no network and the default limits. */
export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = { method: 'bubblewrap', network: { kind: 'none' } };

/** The run's way of running agents' commands: one confined runner per agent and directory. */
export interface CommandRunners {
  readonly method: SandboxMethod;
  /** A runner for the commands one agent runs in `dir` (its workspace, or a planner's view of main). */
  forAgent(agentId: string, dir: string): RunProcess;
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
}

export type OpenedCommandRunners = { readonly ok: true; readonly runners: CommandRunners } | { readonly ok: false; readonly error: string };

/**
 * Opens the sandbox the user chose and fails closed: when it cannot confine commands here, the
 * run does not start, and the error names the fix and the explicit way out (`--sandbox none`).
 * Agents never choose: nothing a model sends reaches these settings.
 */
export async function openCommandRunners(options: OpenCommandRunnersOptions): Promise<OpenedCommandRunners> {
  const { settings } = options;
  const opened = await openSandbox({ method: settings.method, runId: options.runId, ...(settings.limits === undefined ? {} : { limits: settings.limits }) });
  if (!opened.ok) {
    return {
      ok: false,
      error:
        `cannot confine agents' commands here: ${opened.problem}\n` +
        `To fix it: ${opened.fix}\n` +
        'Or, to run every command an agent writes unconfined, with your own permissions, pass --sandbox none.',
    };
  }
  const sandbox = opened.sandbox;
  if (sandbox.sharedGroup !== null) {
    const blocked = unreachableFor(sandbox.sharedGroup, [options.stateDir, options.repo.gitDir]);
    if (blocked !== null) {
      await sandbox.close();
      return {
        ok: false,
        error:
          `cannot confine agents' commands here: they run as other users, who cannot get through ${blocked} (only its owner may enter it), ` +
          `so they could not reach their workspaces or the repository.\n` +
          `To fix it: let others through it with \`chmod o+x ${blocked}\` (they still cannot list or read what is inside), ` +
          'or keep the repository and --state somewhere they can reach.',
      };
    }
  }
  let proxy: EgressProxy | null = null;
  let previousUmask: number | null = null;
  try {
    if (sandbox.sharedGroup !== null) {
      // Commands run under other uids in the sandbox's group: what the harness makes for them
      // (checkouts, overlay layers, files its tools write) must be group-writable.
      previousUmask = process.umask(0o002);
      for (const dir of options.workDirs) await shareDirectoryWithGroup(dir, sandbox.sharedGroup);
    }
    if (settings.network.kind === 'hosts') {
      const started = await startEgressProxy({
        hosts: settings.network.hosts,
        directory: join(options.stateDir, 'egress'),
        onDecision: ({ host, port, allowed }) => options.record({ type: 'network.requested', data: { host, port, allowed } }),
      });
      if (!started.ok) throw new Error(started.error);
      proxy = started.proxy;
    }
  } catch (error) {
    if (previousUmask !== null) process.umask(previousUmask);
    await proxy?.close();
    await sandbox.close();
    return { ok: false, error: `colony could not prepare the sandbox: ${error instanceof Error ? error.message : String(error)}` };
  }
  options.record({ type: 'sandbox.opened', data: { method: sandbox.method, summary: sandbox.summary, network: describeNetwork(settings.network) } });
  const umask = previousUmask;
  let closing: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    await proxy?.close();
    await sandbox.close();
    if (umask !== null) process.umask(umask);
  };
  return { ok: true, runners: createRunners(sandbox, settings.network, proxy, options, () => (closing ??= close())) };
}

function createRunners(
  sandbox: Sandbox,
  network: NetworkPolicy,
  proxy: EgressProxy | null,
  options: OpenCommandRunnersOptions,
  close: () => Promise<void>,
): CommandRunners {
  const bridge = proxy === null ? null : egressBridgeExtras({ proxySocketPath: proxy.socketPath });
  return {
    method: sandbox.method,
    forAgent: (agentId, dir) =>
      sandbox.runnerFor({
        agentId,
        workspace: dir,
        hidden: [options.stateDir],
        spillDir: join(options.stateDir, 'output', agentId),
        shareNetwork: network.kind === 'all',
        extras: commandExtras(options.repo, bridge),
      }),
    close,
  };
}

/**
 * What every confined command gets besides its workspace: the repository's git directory to
 * read (a workspace's `.git` file points there, and it may lie under a directory the sandbox
 * replaces, such as `/tmp`), and the network bridge when hosts are allowed.
 */
function commandExtras(repo: Repository, bridge: ConfinementExtras | null): ConfinementExtras {
  return {
    binds: [{ source: repo.gitDir, target: repo.gitDir, writable: false }, ...(bridge?.binds ?? [])],
    prelude: bridge?.prelude ?? '',
    environment: bridge?.environment ?? {},
  };
}

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
  return { method: 'none', forAgent: () => runProcess, close: async () => undefined };
}

/**
 * The first directory on the way to any of `paths` (themselves included) that a process in
 * group `gid` may not enter, or null when every one of them lets it through. bubblewrap opens
 * what it binds as the agent's uid, so a private home (mode 0700) above a repository stops it.
 */
function unreachableFor(gid: number, paths: readonly string[]): string | null {
  for (const path of paths) {
    for (let dir = path; ; dir = dirname(dir)) {
      const info = statOrNull(dir);
      if (info !== null && (info.mode & 0o001) === 0 && !(info.gid === gid && (info.mode & 0o010) !== 0)) return dir;
      if (dirname(dir) === dir) break;
    }
  }
  return null;
}

function statOrNull(path: string): { mode: number; gid: number } | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
