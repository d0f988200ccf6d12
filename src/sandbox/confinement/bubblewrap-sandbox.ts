import { CONFINED_HOME, PRIVATE_DIRECTORIES, SPILL_MOUNT, commandStage, prlimitArguments, resolverDirectory, setprivArguments } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { viewMounts } from './view-mounts.js';

/**
 * The command line of one command under bubblewrap, after the launcher has joined its cgroup:
 *
 *   prlimit (limits, as root) → setpriv (the agent's uid, no capabilities, no_new_privs)
 *   → bwrap (read-only root, own /dev, /proc, /tmp and /run, the workspace writable, hidden paths
 *   covered, the innermost mount winning (`viewMounts`), every namespace new, network only when
 *   allowed) → bash -c COMMAND
 *
 * The uid is dropped before bwrap on purpose: bwrap run as root keeps its capabilities
 * inside, and with them could read /etc/shadow or remount the root writable. Run by an
 * unprivileged uid, bwrap gets its powers only inside a user namespace of its own, and
 * `--disable-userns` stops the command from making another one.
 *
 * The command's environment is not passed with `--setenv`: arguments are visible to every
 * user through /proc, so it travels in the environment the launcher starts with instead,
 * which bwrap hands on unchanged.
 */
export function bubblewrapArguments(plan: ConfinementPlan, cwd: string, command: string): string[] {
  return [...prlimitArguments(plan), ...setprivArguments(plan), plan.tools.bwrap, ...bwrapOptions(plan, cwd), '--', '/bin/bash', '-c', commandStage(plan.prelude), 'colony-command', command];
}

function bwrapOptions(plan: ConfinementPlan, cwd: string): string[] {
  const options = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const directory of PRIVATE_DIRECTORIES) options.push('--tmpfs', directory);
  const resolver = resolverDirectory();
  if (resolver !== null) options.push('--ro-bind', resolver, resolver);
  options.push('--dir', CONFINED_HOME);
  const mounts = viewMounts(plan);
  for (const mount of mounts) {
    if (mount.kind === 'bind') options.push(mount.writable ? '--bind' : '--ro-bind', mount.source, mount.target);
    else options.push(...(mount.type === 'directory' ? ['--tmpfs', mount.path] : ['--ro-bind', '/dev/null', mount.path]));
  }
  if (plan.spillDirectory !== null) options.push('--ro-bind', plan.spillDirectory, SPILL_MOUNT);
  // bwrap's tmpfs belongs to the command's uid; made read-only once the mount points inside
  // it exist, it stays the empty, unwritable directory a hidden path should look like.
  for (const mount of mounts) if (mount.kind === 'hide' && mount.type === 'directory') options.push('--remount-ro', mount.path);
  options.push('--unshare-user', '--disable-userns', '--unshare-all');
  if (plan.shareNetwork) options.push('--share-net');
  options.push('--die-with-parent', '--new-session', '--chdir', cwd);
  return options;
}
