import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfinedSandbox } from './confinement/confined-sandbox.js';

export const CGROUP_FIX =
  'run colony as root on a host whose memory and pids cgroup controllers are mounted (cgroup v1 with freezer, or v2), ' +
  'or give it a delegated cgroup v2 subtree, e.g. `systemd-run --user --scope -p Delegate=yes colony …`; ' +
  'or choose --sandbox none to run commands unconfined';

export const USER_NAMESPACE_FIX =
  'allow unprivileged user namespaces, which bubblewrap needs: `sysctl -w user.max_user_namespaces=15000`, ' +
  'and on older Debian kernels `sysctl -w kernel.unprivileged_userns_clone=1`, on Ubuntu 23.10 and later ' +
  '`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for bwrap); ' +
  'or, as root, choose --sandbox unshare (weaker)';

const PROBE_AGENT = 'colony-probe';
const PROBE_TIMEOUT_MS = 20_000;

/**
 * Runs one command through the whole chain and checks what it reports: its uid and gid are
 * the agent's, it can write its workspace, it cannot write a world-writable directory outside
 * the workspace (bubblewrap; the unshare fallback has no read-only view, so there only /etc
 * is checked, which file permissions guard). Returns null when all holds, else the problem
 * and a fix. The probe's directories are removed whatever happens.
 */
export async function probeConfinedSandbox(
  confined: ConfinedSandbox,
  method: 'bubblewrap' | 'unshare',
): Promise<{ error: string; fix: string } | null> {
  const directory = mkdtempSync(join(tmpdir(), 'colony-sandbox-probe-'));
  try {
    const { uid, gid } = confined.identityOf(PROBE_AGENT);
    chmodSync(directory, 0o755);
    const workspace = join(directory, 'workspace');
    const outside = join(directory, 'outside');
    mkdirSync(workspace);
    chmodSync(workspace, 0o770);
    mkdirSync(outside);
    chmodSync(outside, 0o777);
    if (process.getuid?.() === 0) chownSync(workspace, uid, gid);
    const runner = confined.sandbox.runnerFor({
      agentId: PROBE_AGENT,
      workspace,
      hidden: [],
      spillDir: join(directory, 'spill'),
      shareNetwork: false,
    });
    const command = [
      'id -u; id -g',
      `if ( : > '${outside}/written' ) 2>/dev/null; then echo outside-writable; fi`,
      'if [ -w /etc ]; then echo etc-writable; fi',
      ': > probe-file && echo workspace-writable',
    ].join('\n');
    const result = await runner({ command, cwd: workspace, timeoutMs: PROBE_TIMEOUT_MS });
    if (result.startError !== null) return { error: `the sandbox probe could not run a command: ${result.startError}`, fix: fixFor(result.startError) };
    const lines = result.output.trim().split('\n');
    const problems: string[] = [];
    if (result.timedOut) problems.push(`it did not finish within ${PROBE_TIMEOUT_MS / 1000} s`);
    if (lines[0] !== String(uid) || lines[1] !== String(gid)) problems.push(`it ran as uid ${lines[0]} gid ${lines[1]}, not ${uid} and ${gid}`);
    if (method === 'bubblewrap' && lines.includes('outside-writable')) problems.push('it could write outside its workspace');
    if (lines.includes('etc-writable')) problems.push('it could write /etc');
    if (!lines.includes('workspace-writable')) problems.push('it could not write its workspace');
    if (problems.length === 0) return null;
    return {
      error: `the sandbox probe command did not behave as confined: ${problems.join('; ')} (output: ${result.output.trim().slice(0, 500)})`,
      fix: `check that ${method === 'bubblewrap' ? 'bwrap' : 'unshare'}, setpriv and prlimit are the distribution's own (not wrappers), or choose --sandbox none to run commands unconfined`,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * Why root cannot cover private directories here, or null when it can: `unshare` and `mount`
 * must be there, and one tmpfs must mount in a mount namespace of its own (a container without
 * CAP_SYS_ADMIN refuses both). Takes a few milliseconds; nothing outside the namespace changes.
 */
export function probeMountNamespace(programs: { readonly unshare: string; readonly mount: string }): string | null {
  const missing = (['unshare', 'mount'] as const).filter((name) => programs[name] === '');
  if (missing.length > 0) return `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not installed`;
  const made = spawnSync(programs.unshare, ['--mount', '--propagation', 'private', '--', programs.mount, '-n', '-t', 'tmpfs', '-o', 'size=4k', 'colony-probe', '/tmp'], {
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
  });
  if (made.status === 0) return null;
  return `a mount namespace could not be made: ${(made.stderr ?? '').trim() || (made.error?.message ?? `exit status ${made.status}`)}`;
}

/** The fix for a start failure, read from what bwrap or the kernel said. */
function fixFor(startError: string): string {
  if (/namespace|uid map|setting up uid|Operation not permitted|No permissions to creat/i.test(startError)) return USER_NAMESPACE_FIX;
  if (/cgroup/i.test(startError)) return CGROUP_FIX;
  return 'the problem quotes what the sandbox printed: fix what it names, or choose --sandbox none to run commands unconfined';
}
