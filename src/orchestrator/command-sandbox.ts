import { join } from 'node:path';
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
        `colony cannot confine agents' commands here: ${opened.problem}\n` +
        `To fix it: ${opened.fix}\n` +
        'Or, to run every command an agent writes unconfined, with your own permissions, pass --sandbox none.',
    };
  }
  const sandbox = opened.sandbox;
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
  // The bridge's socket goes under the sandbox's fresh /tmp: the rest of its root is read-only, with no place for a mount point.
  const bridge = proxy === null ? null : egressBridgeExtras({ proxySocketPath: proxy.socketPath, sandboxSocketPath: '/tmp/.colony-egress/proxy.sock' });
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
 * read (a workspace's `.git` file points there, and it may lie under a hidden directory such as
 * `/tmp`), git told that a checkout owned by the harness's uid is safe to read, and the
 * network bridge when hosts are allowed.
 */
function commandExtras(repo: Repository, bridge: ConfinementExtras | null): ConfinementExtras {
  return {
    binds: [{ source: repo.gitDir, target: repo.gitDir, writable: false }, ...(bridge?.binds ?? [])],
    prelude: bridge?.prelude ?? '',
    environment: {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'safe.directory',
      GIT_CONFIG_VALUE_0: '*',
      ...(bridge?.environment ?? {}),
    },
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
