import { Option, type Command } from 'commander';
import { parseNetworkPolicy, type NetworkPolicyResult } from '../sandbox/network/network-policy.js';
import { packageRegistryHosts } from './package-registries.js';
import { resolveCommandLimits } from '../sandbox/process/command-limits.js';
import type { SandboxMethod } from '../sandbox/types.js';
import { byteSize, positiveInteger, usageError, type CommandContext } from './command-context.js';
import type { SandboxSettings } from '../events/run-settings.js';

/** Which flag sets which of the limits. */
const LIMIT_FLAGS: Readonly<Record<string, string>> = { memoryBytes: '--command-memory', maxProcesses: '--command-processes', cpuSeconds: '--command-cpu' };

const SANDBOX_METHODS: readonly SandboxMethod[] = ['bubblewrap', 'unshare', 'none'];

/** The flags `addSandboxOptions` adds, as commander hands them over. */
export interface SandboxFlags {
  readonly sandbox: SandboxMethod;
  readonly network?: string;
  readonly networkAllow?: readonly string[];
  readonly commandMemory?: number;
  readonly commandProcesses?: number;
  readonly commandCpu?: number;
}

/** Adds the flags that say how agents' commands are confined, shared by `run`, `work` and `demo`. */
export function addSandboxOptions(command: Command, defaultMethod: SandboxMethod = 'bubblewrap'): Command {
  return command
    .addOption(
      new Option(
        '--sandbox <method>',
        "how agents' commands are confined: bubblewrap (a separate uid, a read-only system, cgroup limits), " +
          'unshare (weaker: no read-only view, for machines without bubblewrap) or none (unconfined, your own permissions)',
      )
        .choices([...SANDBOX_METHODS])
        .default(defaultMethod),
    )
    .option('--network <policy>', "network for agents' commands: none (the default), registries (the package registries the project names, through a proxy), or allow (every host)")
    .option(
      '--network-allow <hosts>',
      "let agents' commands reach only these hosts (comma-separated, *.domain for its subdomains, repeatable), through a proxy",
      (value: string, previous: readonly string[] = []) => [...previous, value],
    )
    .option('--command-memory <size>', 'the most memory one command may use, e.g. 2G', byteSize)
    .option('--command-processes <n>', 'the most processes one command may run at once', positiveInteger)
    .option('--command-cpu <seconds>', 'the most CPU time one command may use', positiveInteger);
}

/** The settings the flags ask for, or the reason they contradict each other. */
export function sandboxSettingsOf(
  flags: SandboxFlags,
  registries: readonly string[] = [],
  setupRegistries: readonly string[] = [],
): { ok: true; settings: SandboxSettings } | { ok: false; error: string } {
  if (flags.sandbox === 'none' && (flags.networkAllow !== undefined || flags.network === 'none' || flags.network === 'registries')) {
    return {
      ok: false,
      error: "--sandbox none runs commands with the machine's own network, so a network policy cannot hold: drop --network/--network-allow, or choose --sandbox bubblewrap.",
    };
  }
  if (flags.sandbox === 'none' && (flags.commandMemory !== undefined || flags.commandProcesses !== undefined || flags.commandCpu !== undefined)) {
    return { ok: false, error: '--sandbox none runs commands without limits, so --command-memory, --command-processes and --command-cpu cannot hold: drop them, or choose --sandbox bubblewrap.' };
  }
  const network: NetworkPolicyResult =
    flags.sandbox === 'none'
      ? { ok: true, policy: { kind: 'all' } }
      : parseNetworkPolicy({ ...(flags.network === undefined ? {} : { network: flags.network }), ...(flags.networkAllow === undefined ? {} : { networkAllow: flags.networkAllow }), registries });
  if (!network.ok) return { ok: false, error: network.error };
  const limits = {
    ...(flags.commandMemory === undefined ? {} : { memoryBytes: flags.commandMemory }),
    ...(flags.commandProcesses === undefined ? {} : { maxProcesses: flags.commandProcesses }),
    ...(flags.commandCpu === undefined ? {} : { cpuSeconds: flags.commandCpu }),
  };
  const checked = resolveCommandLimits(limits);
  if (!checked.ok) {
    const flag = Object.entries(LIMIT_FLAGS).find(([name]) => checked.error.includes(` ${name} `))?.[1] ?? 'a --command-* flag';
    return { ok: false, error: `${flag} is too small: ${checked.error.replace(/the command limit \w+/, 'it')}.` };
  }
  const setupNetwork: SandboxSettings['setupNetwork'] = flags.sandbox === 'none' || setupRegistries.length === 0 ? { kind: 'all' } : { kind: 'hosts', hosts: setupRegistries };
  return { ok: true, settings: { method: flags.sandbox, network: network.policy, setupNetwork, limits } };
}

/**
 * The line a weaker choice earns on stderr, whatever `--quiet` says: unconfined commands, or
 * the fallback without a read-only view of the system. Null for bubblewrap.
 */
export function sandboxWarning(settings: Pick<SandboxSettings, 'method'>): string | null {
  if (settings.method === 'none') {
    return "colony: WARNING: --sandbox none: every command an agent writes runs unconfined, with your permissions, your files and your network.\n";
  }
  if (settings.method === 'unshare') {
    return 'colony: WARNING: --sandbox unshare: commands run as other users with limits, but without a read-only view of the system: they can write wherever file permissions let any user.\n';
  }
  return null;
}

/**
 * The settings the flags ask for, with a warning on stderr for a weaker choice; or null after a
 * usage error that says what contradicts what (the exit code is set then).
 */
export function reportSandboxSettings(ctx: CommandContext, flags: SandboxFlags, repoDir: string): SandboxSettings | null {
  const registries = packageRegistryHosts(repoDir, ctx.env);
  const sandbox = sandboxSettingsOf(flags, flags.network === 'registries' ? registries : [], registries);
  if (!sandbox.ok) {
    usageError(ctx, sandbox.error);
    return null;
  }
  const warning = sandboxWarning(sandbox.settings);
  if (warning !== null) ctx.stderr(warning);
  return sandbox.settings;
}
