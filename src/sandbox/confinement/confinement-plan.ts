import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { CPU_KILL_AFTER_SECONDS } from '../process/command-limits.js';
import type { CommandLimits } from '../process/command-limits.js';

/** Where a command sees its agent's spill directory, read-only. */
export const SPILL_MOUNT = '/tmp/colony-output';
/** HOME inside the confinement: private to the command, on its /tmp. */
export const CONFINED_HOME = '/tmp/home';

/**
 * Directories every confined command gets fresh and empty (a private tmpfs), whatever the
 * caller says. A Unix socket stays connectable through a read-only view, and /run is where
 * a host keeps them: the system bus, the per-user runtime directories (a session bus, ssh
 * and gpg agents, the user's systemd, which can start programs outside any sandbox), and
 * database servers' sockets. /tmp holds the rest, and other runs' files.
 */
export const PRIVATE_DIRECTORIES: readonly string[] = ['/tmp', '/run'];

/**
 * The directory under /run that /etc/resolv.conf leads to (systemd-resolved's
 * `/run/systemd/resolve`), shown again read-only so name resolution keeps working when the
 * network is shared; null when resolv.conf lives elsewhere.
 */
export function resolverDirectory(): string | null {
  try {
    const directory = dirname(realpathSync('/etc/resolv.conf'));
    return isInside('/run', directory) && directory !== '/run' ? directory : null;
  } catch {
    return null;
  }
}

/** A host path shown inside the confinement. */
export interface Bind {
  readonly source: string;
  readonly target: string;
  readonly writable: boolean;
}

/** Everything about one agent's confinement that does not change from command to command. */
export interface ConfinementPlan {
  /** Absolute paths of the programs the chain runs. */
  readonly tools: Readonly<Record<'bwrap' | 'setpriv' | 'prlimit' | 'unshare' | 'mount' | 'ip', string>>;
  /** The uid and gid commands run as, or null when the harness is not root and keeps its own. */
  readonly identity: { readonly uid: number; readonly gid: number } | null;
  readonly limits: CommandLimits;
  readonly workspace: string;
  /** Paths to hide (an empty directory or file in their place); missing ones are skipped. */
  readonly hidden: readonly string[];
  readonly binds: readonly Bind[];
  /** The host directory shown read-only at SPILL_MOUNT, or null for none. */
  readonly spillDirectory: string | null;
  readonly shareNetwork: boolean;
  /** Bash run inside the confinement before the command ('' for none). */
  readonly prelude: string;
  /**
   * Whether directories the agent's uid may not enter, on the way to what it needs, are covered
   * in the command's mount namespace with only what it needs shown again
   * (`private-directories.ts`); only when commands run as other uids and root can make the namespace.
   */
  readonly coverPrivateDirectories: boolean;
}

/** `prlimit …  --`: the per-process limits, set by root before any privilege is dropped. */
export function prlimitArguments(plan: ConfinementPlan): string[] {
  const { cpuSeconds, maxFileBytes, maxOpenFiles } = plan.limits;
  return [
    plan.tools.prlimit,
    // Soft limit: SIGXCPU, which ends the process and says why; hard limit: SIGKILL for one that catches it.
    `--cpu=${cpuSeconds}:${cpuSeconds + CPU_KILL_AFTER_SECONDS}`,
    `--fsize=${maxFileBytes}`,
    `--nofile=${maxOpenFiles}`,
    '--core=0',
    '--',
  ];
}

/** `setpriv … --`: the uid switch with every capability dropped, or only no_new_privs when not root. */
export function setprivArguments(plan: ConfinementPlan): string[] {
  if (plan.identity === null) return [plan.tools.setpriv, '--no-new-privs', '--'];
  return [
    plan.tools.setpriv,
    '--reuid',
    String(plan.identity.uid),
    '--regid',
    String(plan.identity.gid),
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}

/**
 * The script that starts the command inside the confinement: it tells the runner, on fd 3,
 * that the command is confined (anything that fails before this is a start error), closes
 * fd 3 so the command cannot hold it, runs the prelude, and execs `bash -c COMMAND`.
 * Arguments: $1 is the command.
 */
export function commandStage(prelude: string): string {
  const lines = ['printf started >&3', 'exec 3>&-'];
  if (prelude.trim() !== '') lines.push(prelude);
  lines.push('exec /bin/bash -c "$1"');
  return lines.join('\n');
}

/** A hidden path as the confinement must treat it: a directory or a file, after symbolic links. */
export interface HiddenPath {
  readonly path: string;
  readonly kind: 'directory' | 'file';
}

/**
 * The hidden paths that need hiding: those that exist, with symbolic links resolved, without
 * `/`, without paths under /tmp and /run (a confined command gets fresh ones anyway) unless a
 * directory the plan shows again (`shownAgainOf`: the workspace, a bind's target) brings them
 * back, as a bound git directory under /tmp brings back the state directory inside it, and
 * without paths the command's uid could not reach anyway (which the confinement, running as
 * that uid, could not cover either): through their parent directories on the host, or, where
 * private directories are covered, in the view the covers make (`reachable`). Shortest first,
 * so a path inside another hidden one is hidden after it.
 */
export function existingHiddenPaths(
  hidden: readonly string[],
  identity: ConfinementPlan['identity'],
  reachable: (path: string) => boolean = (path) => parentsTraversable(path, identity),
  shownAgain: readonly string[] = [],
): HiddenPath[] {
  const found = new Map<string, HiddenPath>();
  for (const candidate of hidden) {
    if (!isAbsolute(candidate)) continue;
    let path: string;
    try {
      path = realpathSync(candidate);
    } catch {
      continue;
    }
    const replaced = PRIVATE_DIRECTORIES.some((directory) => isInside(directory, path)) && !shownAgain.some((directory) => isInside(directory, path));
    if (path === '/' || replaced || !reachable(path)) continue;
    const kind = statSync(path).isDirectory() ? 'directory' : 'file';
    found.set(path, { path, kind });
  }
  return [...found.values()].sort((a, b) => a.path.length - b.path.length);
}

/** The directories a plan shows again on top of its fresh /tmp and /run: the workspace and each bind's target. */
export function shownAgainOf(plan: ConfinementPlan): string[] {
  return [plan.workspace, ...plan.binds.map((bind) => bind.target)];
}

/**
 * The binds split by when they are mounted. One whose target holds a hidden path (the
 * repository's git directory, when the state directory lies inside it) goes before the hiding,
 * or it would show the hidden path again from the host; every other one after, so one whose
 * target lies in a hidden directory is shown on top of it.
 */
export function bindsAroundHidden(binds: readonly Bind[], hidden: readonly HiddenPath[]): { before: Bind[]; after: Bind[] } {
  const holdsHidden = (bind: Bind): boolean => {
    const targets = new Set([resolve(bind.target), realOrSelf(bind.target)]);
    return hidden.some((entry) => [...targets].some((target) => entry.path !== target && isInside(target, entry.path)));
  };
  return { before: binds.filter(holdsHidden), after: binds.filter((bind) => !holdsHidden(bind)) };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether the uid (or the harness's own, for null) may search every directory above `path`. */
function parentsTraversable(path: string, identity: ConfinementPlan['identity']): boolean {
  const uid = identity?.uid ?? process.getuid?.() ?? 0;
  if (uid === 0) return true;
  const gids = identity === null ? [process.getgid?.() ?? 0, ...(process.getgroups?.() ?? [])] : [identity.gid];
  for (let directory = dirname(path); ; directory = dirname(directory)) {
    const info = statSync(directory);
    const bit = info.uid === uid ? 0o100 : gids.includes(info.gid) ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
    if (directory === '/') return true;
  }
}

/** True when `path` is `directory` or inside it. */
export function isInside(directory: string, path: string): boolean {
  const rest = relative(resolve(directory), resolve(path));
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}
