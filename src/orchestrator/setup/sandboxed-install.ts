import { chmod } from 'node:fs/promises';
import { type RunInstall } from '../../workspace/dependencies/npm-install.js';
import type { CommandRunners } from './command-sandbox.js';

const OUTPUT_TAIL_CHARS = 2_000;

/**
 * Variables of the install's environment the sandbox provides itself (a home and a temporary
 * directory of its own, its own PATH and user); passing the harness's would point npm at
 * directories the install's uid cannot write.
 */
const SANDBOX_OWN_VARIABLES = new Set(['HOME', 'TMPDIR', 'PATH', 'USER', 'LOGNAME']);

/**
 * The shared dependency install, run like an agent's command: in the run's sandbox, as a uid of
 * its own, able to write only its staging folder. The lockfile and `.npmrc` it reads come from
 * the repository, which agents write, and npm runs programs its configuration names (`git=`,
 * `script-shell=`) even with `--ignore-scripts`; so it never runs as the harness. It does get
 * the network: npm's, pnpm's and yarn's installs only the package registries, through the run's
 * setup proxy, a project's own setup the host's.
 */
export function sandboxedInstall(commands: CommandRunners): RunInstall {
  return async (request) => {
    if (commands.sharedGroup !== null) {
      // A staging folder is made private (mkdtemp); the install's uid must get in and write.
      await chmod(request.dir, 0o2770);
    }
    const environment = Object.fromEntries(Object.entries(request.environment).filter(([name, value]) => keptInSandbox(name, value)));
    const command = request.command;
    const result = await commands.forInstall(request.dir, request.registriesOnly)({
      command,
      cwd: request.dir,
      timeoutMs: request.timeoutMs,
      env: environment,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    const tail = result.output.trim().slice(-OUTPUT_TAIL_CHARS);
    if (result.startError !== null) return { ok: false, error: `could not run ${command}: ${result.startError}` };
    if (result.timedOut) return { ok: false, error: `${command} was stopped: it did not finish within ${Math.round(request.timeoutMs / 1000)} s. ${tail}`.trim() };
    if (result.aborted) return { ok: false, error: `${command} was stopped: it was cancelled. ${tail}`.trim() };
    if (result.exitCode === 0) return { ok: true };
    const how = result.outOfMemory ? 'out of memory' : result.exitCode === null ? `killed by ${result.signal ?? 'a signal'}` : `exit ${result.exitCode}`;
    return { ok: false, error: `${command} failed (${how}): ${tail}` };
  };
}

/**
 * Whether a variable of the install's environment goes into the sandbox. npm's settings that
 * name a path (`npm_config_cache=/root/.npm`, set when colony itself runs under npm) point at
 * the harness's own files, which the install's uid may not write: npm uses its defaults under
 * the sandbox's home instead.
 */
function keptInSandbox(name: string, value: string): boolean {
  if (SANDBOX_OWN_VARIABLES.has(name)) return false;
  return !(name.toLowerCase().startsWith('npm_config_') && value.startsWith('/'));
}
