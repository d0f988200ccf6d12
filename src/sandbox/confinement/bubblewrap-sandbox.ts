import {
  CONFINED_HOME,
  PRIVATE_DIRECTORIES,
  SPILL_MOUNT,
  commandStage,
  existingHiddenPaths,
  isInside,
  prlimitArguments,
  resolverDirectory,
  setprivArguments,
} from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';

/**
 * The command line of one command under bubblewrap, after the launcher has joined its cgroup:
 *
 *   prlimit (limits, as root) → setpriv (the agent's uid, no capabilities, no_new_privs)
 *   → bwrap (read-only root, own /dev, /proc, /tmp and /run, the workspace writable, hidden paths
 *   covered, every namespace new, network only when allowed) → bash -c COMMAND
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
  const hidden = existingHiddenPaths(plan.hidden, plan.identity);
  const hide = (path: string, kind: 'directory' | 'file'): string[] =>
    kind === 'directory' ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
  // Hidden paths around the workspace go first, so the workspace is bound again on top of
  // them when it lies inside one; hidden paths inside the workspace go after it.
  for (const entry of hidden) if (!isInside(plan.workspace, entry.path)) options.push(...hide(entry.path, entry.kind));
  options.push('--bind', plan.workspace, plan.workspace);
  for (const entry of hidden) if (isInside(plan.workspace, entry.path)) options.push(...hide(entry.path, entry.kind));
  for (const bind of plan.binds) options.push(bind.writable ? '--bind' : '--ro-bind', bind.source, bind.target);
  if (plan.spillDirectory !== null) options.push('--ro-bind', plan.spillDirectory, SPILL_MOUNT);
  // bwrap's tmpfs belongs to the command's uid; made read-only once the mount points inside
  // it exist, it stays the empty, unwritable directory a hidden path should look like.
  for (const entry of hidden) if (entry.kind === 'directory') options.push('--remount-ro', entry.path);
  options.push('--unshare-user', '--disable-userns', '--unshare-all');
  if (plan.shareNetwork) options.push('--share-net');
  options.push('--die-with-parent', '--new-session', '--chdir', cwd);
  return options;
}
