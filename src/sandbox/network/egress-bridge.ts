import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * Where the proxy's socket appears inside a sandbox. Its parent is made by bubblewrap when it
 * binds the socket, so the sandbox's `/run` must be writable for it (a tmpfs), as `/tmp` is.
 */
export const SANDBOX_EGRESS_SOCKET_PATH = '/run/colony-egress/proxy.sock';
/** The port on the sandbox's own loopback where the bridge listens; each sandbox has its own. */
export const DEFAULT_BRIDGE_PORT = 3128;
/** How long the prelude waits for the bridge to listen before it says so and lets the command run. */
const BRIDGE_WAIT_TRIES = 2_500;
const BRIDGE_WAIT_STEP_SECONDS = '0.002';

/** A bind mount into the sandbox, in the confined runner's shape. */
export interface SandboxBind {
  readonly source: string;
  readonly target: string;
  readonly writable: boolean;
}

/** What a sandbox adds for one agent, in the confined runner's `extras` shape. */
export interface EgressBridgeExtras {
  readonly binds: SandboxBind[];
  /** Bash run before the command, in the same shell. */
  readonly prelude: string;
  readonly environment: Record<string, string>;
}

export interface EgressBridgeOptions {
  /** The proxy's socket on the host (EgressProxy.socketPath). */
  readonly proxySocketPath: string;
  readonly sandboxSocketPath?: string;
  readonly port?: number;
}

/**
 * What a command in a network-less sandbox needs to reach the run's egress proxy: the proxy's
 * socket bound in (read-only: connecting needs write permission on the socket inode, which
 * the socket's own 0666 mode gives; a read-only mount does not take it away), a prelude that
 * starts socat as a TCP listener on the sandbox's private loopback relaying to that socket,
 * and the variables that point proxy-aware tools at it.
 *
 * The prelude waits until the bridge accepts connections (polling, not a fixed sleep), and
 * socat's descriptors go to /dev/null, so the command's output pipes close when the command
 * ends. socat is not stopped by the prelude: it dies with the sandbox's pid namespace (or
 * process group) when the runner ends the command.
 */
export function egressBridgeExtras(options: EgressBridgeOptions): EgressBridgeExtras {
  const sandboxSocketPath = options.sandboxSocketPath ?? SANDBOX_EGRESS_SOCKET_PATH;
  const port = options.port ?? DEFAULT_BRIDGE_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`bridge port ${port} is not a TCP port`);
  if (!/^\/[\w./-]+$/.test(sandboxSocketPath)) throw new Error(`sandbox socket path ${sandboxSocketPath} must be absolute and plain`);
  return {
    binds: [{ source: options.proxySocketPath, target: sandboxSocketPath, writable: false }],
    prelude: bridgePrelude(sandboxSocketPath, port),
    environment: proxyEnvironment(port),
  };
}

/** The variables proxy-aware tools (curl, git, npm, pip, apt…) read, pointed at the bridge. */
export function proxyEnvironment(port: number): Record<string, string> {
  const proxy = `http://127.0.0.1:${port}`;
  const noProxy = 'localhost,127.0.0.1';
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    ALL_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    all_proxy: proxy,
    npm_config_proxy: proxy,
    npm_config_https_proxy: proxy,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

function bridgePrelude(sandboxSocketPath: string, port: number): string {
  const listener = `TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`;
  return [
    `# colony: relay 127.0.0.1:${port} in this sandbox to the run's egress proxy`,
    'if command -v socat >/dev/null 2>&1; then',
    `  socat ${listener} UNIX-CONNECT:${sandboxSocketPath} </dev/null >/dev/null 2>&1 &`,
    '  __colony_bridge_pid=$!',
    '  __colony_bridge_tries=0',
    `  until (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; do`,
    `    if ! kill -0 "$__colony_bridge_pid" 2>/dev/null || [ "$__colony_bridge_tries" -ge ${BRIDGE_WAIT_TRIES} ]; then`,
    `      echo "colony: the network bridge (socat on 127.0.0.1:${port}) did not start; requests through the proxy will fail" >&2`,
    '      break',
    '    fi',
    '    __colony_bridge_tries=$((__colony_bridge_tries + 1))',
    `    sleep ${BRIDGE_WAIT_STEP_SECONDS}`,
    '  done',
    '  unset __colony_bridge_pid __colony_bridge_tries',
    'else',
    '  echo "colony: socat is missing, so this sandbox has no route to the network proxy" >&2',
    'fi',
    '',
  ].join('\n');
}

/** Whether socat, which the bridge runs, is on `PATH` (the sandbox sees the host's /usr). */
export async function findSocat(path: string | undefined = process.env['PATH']): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, 'socat');
    try {
      await access(candidate, constants.X_OK);
      return { ok: true, path: candidate };
    } catch {
      // Not in this directory; the next one may have it.
    }
  }
  return { ok: false, error: 'an allow-list of hosts (--network-allow) needs socat to bridge each sandbox to the proxy; install it (apt-get install socat)' };
}
