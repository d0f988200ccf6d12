import {
  CONFINED_HOME,
  PRIVATE_DIRECTORIES,
  SPILL_MOUNT,
  bindsAroundHidden,
  commandStage,
  existingHiddenPaths,
  shownAgainOf,
  isInside,
  prlimitArguments,
  resolverDirectory,
  setprivArguments,
} from './confinement-plan.js';
import type { Bind, ConfinementPlan } from './confinement-plan.js';
import { mountLayoutOf } from './mount-layout.js';
import type { MountLayout } from './mount-layout.js';
import { COVER_FUNCTION, MOUNT_FUNCTIONS } from './mount-script.js';
import { NO_COVERS, coverOperations, planCovers, reachableWith, searchableBy } from './private-directories.js';
import type { PrivateDirectoryCovers } from './private-directories.js';

/**
 * The stage that covers private directories before bubblewrap runs (root, in a mount namespace
 * of the command's own that `unshare --mount` made): it carries out the covers, closes every
 * descriptor it held (the agent must inherit none) and execs the rest of its arguments, so the
 * process tree is the one without it. Arguments: the number of cover operations, each as
 * `cover|show PATH`, then the command line to exec.
 */
const COVER_STAGE = [
  MOUNT_FUNCTIONS,
  COVER_FUNCTION,
  'count=$1; shift',
  'cover_private "$count" "${@:1:count*2}"; shift "$((count * 2))"',
  'close_held',
  'exec "$@"',
].join('\n');

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
  const covers = bubblewrapCovers(plan);
  return [
    ...prlimitArguments(plan),
    ...coverStageArguments(plan, covers),
    ...setprivArguments(plan),
    plan.tools.bwrap,
    ...bwrapOptions(plan, cwd, covers),
    '--',
    '/bin/bash',
    '-c',
    commandStage(plan.prelude),
    'colony-command',
    command,
  ];
}

/** What a command under bubblewrap finds where: the view `bwrapOptions` builds. */
export function bubblewrapLayout(plan: ConfinementPlan): MountLayout {
  return mountLayoutOf(plan, bubblewrapCovers(plan), PRIVATE_DIRECTORIES);
}

/**
 * The private directories to cover before bubblewrap, which opens every source and makes every
 * mount as the agent's uid: those on the way to the workspace, the spill directory, each bind's
 * source and each bind's target outside bubblewrap's own /tmp and /run.
 */
function bubblewrapCovers(plan: ConfinementPlan): PrivateDirectoryCovers {
  if (!plan.coverPrivateDirectories || plan.identity === null) return NO_COVERS;
  const targets = plan.binds.map((bind) => bind.target).filter((path) => !PRIVATE_DIRECTORIES.some((dir) => isInside(dir, path)));
  const sources = [...plan.binds.map((bind) => bind.source), ...(plan.spillDirectory === null ? [] : [plan.spillDirectory])];
  return planCovers([plan.workspace, ...sources, ...targets], searchableBy(plan.identity));
}

/** `unshare --mount … bash -c COVER_STAGE …`, or nothing when no directory needs covering. */
function coverStageArguments(plan: ConfinementPlan, covers: PrivateDirectoryCovers): string[] {
  if (covers.covers.length === 0) return [];
  const operations = coverOperations(covers);
  return [plan.tools.unshare, '--mount', '--propagation', 'private', '--', '/bin/bash', '-c', COVER_STAGE, 'colony-cover-stage', String(operations.length / 2), ...operations];
}

function bwrapOptions(plan: ConfinementPlan, cwd: string, covers: PrivateDirectoryCovers): string[] {
  const options = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const directory of PRIVATE_DIRECTORIES) options.push('--tmpfs', directory);
  const resolver = resolverDirectory();
  if (resolver !== null) options.push('--ro-bind', resolver, resolver);
  options.push('--dir', CONFINED_HOME);
  const hidden = existingHiddenPaths(plan.hidden, plan.identity, plan.identity === null ? undefined : reachableWith(covers, plan.identity), shownAgainOf(plan));
  const hide = (path: string, kind: 'directory' | 'file'): string[] =>
    kind === 'directory' ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
  const binds = bindsAroundHidden(plan.binds, hidden);
  const bind = (entry: Bind): string[] => [entry.writable ? '--bind' : '--ro-bind', entry.source, entry.target];
  for (const entry of binds.before) options.push(...bind(entry));
  // Hidden paths around the workspace go first, so the workspace is bound again on top of
  // them when it lies inside one; hidden paths inside the workspace go after it.
  for (const entry of hidden) if (!isInside(plan.workspace, entry.path)) options.push(...hide(entry.path, entry.kind));
  options.push('--bind', plan.workspace, plan.workspace);
  for (const entry of hidden) if (isInside(plan.workspace, entry.path)) options.push(...hide(entry.path, entry.kind));
  for (const entry of binds.after) options.push(...bind(entry));
  if (plan.spillDirectory !== null) options.push('--ro-bind', plan.spillDirectory, SPILL_MOUNT);
  // bwrap's tmpfs belongs to the command's uid; made read-only once the mount points inside
  // it exist, it stays the empty, unwritable directory a hidden path should look like.
  for (const entry of hidden) if (entry.kind === 'directory') options.push('--remount-ro', entry.path);
  options.push('--unshare-user', '--disable-userns', '--unshare-all');
  if (plan.shareNetwork) options.push('--share-net');
  options.push('--die-with-parent', '--new-session', '--chdir', cwd);
  return options;
}
