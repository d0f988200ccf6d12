import { spawn } from 'node:child_process';

/** One install colony asks for: a shell command line run in `dir`, with exactly `environment`. */
export interface InstallRequest {
  /** A directory holding the install's inputs: package.json and the lockfile, or the files a `setup` command reads. */
  readonly dir: string;
  /** The command line: `NPM_CI_COMMAND` over a lockfile, `NPM_INSTALL_COMMAND` without one, or the project's `setup`. */
  readonly command: string;
  /** The whole environment of the install; nothing else of colony's is passed. */
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * True for npm's, pnpm's and yarn's installs, which need only the package registries (a
   * sandboxed runner lets them reach nothing else); false for a project's own setup, whose hosts
   * colony cannot know.
   */
  readonly registriesOnly: boolean;
}

/** How an install ended. A failure carries the tail of the command's output, which says why. */
export type InstallResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** Runs one install. `runInstallCommand` is the real one; tests wrap it to count or inspect calls. */
export type RunInstall = (request: InstallRequest) => Promise<InstallResult>;

/** An install from a lockfile: no lifecycle scripts, no audit, no funding messages. */
export const NPM_CI_COMMAND = 'npm ci --ignore-scripts --no-audit --no-fund';

/**
 * An install from package.json alone, for a project that commits no lockfile:
 * npm resolves the versions and writes the lockfile it made into the install folder (and its
 * copy, `node_modules/.package-lock.json`, into the layer), never into the repository.
 */
export const NPM_INSTALL_COMMAND = 'npm install --ignore-scripts --no-audit --no-fund';

/**
 * Variables copied from colony's environment. npm needs to find itself and node (PATH), its
 * user config and cache (HOME), a temporary directory, a proxy when the machine has one, and
 * the certificates the machine trusts beyond node's own (`NODE_EXTRA_CA_CERTS`: where TLS is
 * inspected on the way out, yarn 2 and later read no npm `cafile`); nothing else. API keys and
 * colony's own settings stay out: a package's install code never runs (`--ignore-scripts`), but
 * npm itself logs and reports what it is given.
 */
const INHERITED_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TZ',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
];

/**
 * npm's own configuration may also come from the environment (`npm_config_registry`,
 * `npm_config_cache`, …); the user set those for npm, so npm gets them. Other `npm_*`
 * variables (`npm_package_*`, `npm_lifecycle_*`) describe whatever script started colony and
 * are not passed.
 */
const NPM_CONFIG_PREFIX = 'npm_config_';

/** Settings that keep an unattended install quiet and offline from everything but the registry. */
const FIXED_VARIABLES: Readonly<Record<string, string>> = {
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_progress: 'false',
  NO_COLOR: '1',
  CI: '1',
};

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const OUTPUT_TAIL_CHARS = 2_000;
const KILL_GRACE_MS = 2_000;

/** The environment an install runs with: the allow-listed part of `parent` plus fixed settings. */
export function installEnvironment(parent: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const environment: Record<string, string> = { PATH: FALLBACK_PATH };
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || value === '') continue;
    if (INHERITED_VARIABLES.includes(name) || name.toLowerCase().startsWith(NPM_CONFIG_PREFIX)) environment[name] = value;
  }
  return { ...environment, ...FIXED_VARIABLES };
}

/**
 * Runs `request.command` with `sh -c` in `request.dir`, unconfined: the sandbox's runner
 * (`sandboxedInstall`) is what a run uses. Never throws: a non-zero exit, a timeout, a
 * cancellation or a shell that cannot be started come back as `{ ok: false }` with the reason
 * and the tail of the output. The command runs in its own process group, which is killed as a
 * whole when it times out or is cancelled.
 */
export function runInstallCommand(request: InstallRequest): Promise<InstallResult> {
  if (request.signal?.aborted === true) return Promise.resolve({ ok: false, error: 'the install was cancelled before it started' });
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', request.command], { cwd: request.dir, env: { ...request.environment }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4 * OUTPUT_TAIL_CHARS);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    let stoppedBecause: string | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is gone already.
      }
    };
    const stop = (why: string) => {
      if (stoppedBecause !== null) return;
      stoppedBecause = why;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => stop(`it did not finish within ${Math.round(request.timeoutMs / 1000)} s`), request.timeoutMs);
    const onAbort = () => stop('it was cancelled');
    request.signal?.addEventListener('abort', onAbort, { once: true });
    let startError: string | null = null;
    child.on('error', (error) => {
      startError = error.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      request.signal?.removeEventListener('abort', onAbort);
      const tail = output.trim().slice(-OUTPUT_TAIL_CHARS);
      const command = request.command;
      if (startError !== null) resolve({ ok: false, error: `could not run ${command}: ${startError}` });
      else if (stoppedBecause !== null) resolve({ ok: false, error: `${command} was stopped: ${stoppedBecause}. ${tail}`.trim() });
      else if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, error: `${command} failed (${code === null ? `killed by ${signal ?? 'a signal'}` : `exit ${code}`}): ${tail}` });
    });
  });
}
