import { CONFINED_HOME, SPILL_MOUNT, commandStage, prlimitArguments, resolverDirectory, setprivArguments } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { viewMounts } from './view-mounts.js';

/**
 * The root half of the weaker confinement, run as pid 1 of new pid and mount namespaces (and
 * new network, IPC and UTS ones): it gives the command its own /proc, /tmp, /run, /dev/shm
 * and /var/tmp (the resolver's directory shown again), covers the hidden paths and binds the
 * workspace and the extra binds back in, the innermost last (`viewMounts`), then the spill
 * directory (read-only), then starts the command as the agent's uid and waits for it.
 * The sources are held open (a socket through its directory) before anything is hidden, and
 * bound from those descriptors, so a workspace inside a hidden directory (or inside /tmp) is
 * still reachable. The rest of the
 * file system is the host's, guarded by nothing but file permissions.
 *
 * Arguments: uid gid cwd spill-directory-or-empty resolver-directory-or-empty
 * ip-or-empty (to bring up the loopback of a new network namespace) stage command, then the
 * number of mounts and, for each in order, its kind (dir or file to hide, rw or ro to bind),
 * its source ('' for a hidden path) and its target; the rest is the command line that drops to
 * the agent's uid, to which the stage and the command are appended.
 */
const ROOT_STAGE = [
  'fail() { echo "colony: $*" >&2; exit 125; }',
  // Holds a source open and prints the path that reaches it later: a directory or file through
  // its own descriptor, anything else (a socket, which cannot be opened) through its parent's.
  'hold() {',
  '  local fd',
  '  if [ -d "$1" ] || [ -f "$1" ]; then exec {fd}<"$1" || return 1; held="/proc/self/fd/$fd"',
  '  else exec {fd}<"$(dirname "$1")" || return 1; held="/proc/self/fd/$fd/$(basename "$1")"; fi',
  '  held_fds+=("$fd")',
  '}',
  'bind_held() { # held-path target ro|rw',
  '  if [ -d "$1" ]; then mkdir -p "$2"; else mkdir -p "$(dirname "$2")"; [ -e "$2" ] || : > "$2"; fi',
  '  mount --no-canonicalize --bind "$1" "$2" || fail "cannot bind $2"',
  '  if [ "$3" = ro ]; then mount --no-canonicalize -o remount,bind,ro "$2" || fail "cannot make $2 read-only"; fi',
  '}',
  'uid=$1 gid=$2 cwd=$3 spill=$4 resolver=$5 ip=$6 stage=$7 command=$8; shift 8',
  'count=$1; shift; mounts=("${@:1:count*3}"); shift "$((count * 3))"',
  'held_fds=()',
  'if [ -n "$spill" ]; then hold "$spill" || fail "cannot open $spill"; spill_held=$held; fi',
  'if [ -n "$resolver" ]; then hold "$resolver" || fail "cannot open $resolver"; resolver_held=$held; fi',
  'held_sources=()',
  'for ((i = 0; i < ${#mounts[@]}; i += 3)); do',
  '  case "${mounts[i]}" in rw|ro) hold "${mounts[i + 1]}" || fail "cannot open ${mounts[i + 1]}"; held_sources[i]=$held;; esac',
  'done',
  'mount -t proc proc /proc || fail "cannot mount /proc"',
  // A new network namespace starts with its loopback down; bubblewrap brings it up, so do we.
  'if [ -n "$ip" ]; then "$ip" link set lo up || fail "cannot bring up the loopback interface"; fi',
  'for dir in /tmp /run /dev/shm /var/tmp; do',
  '  if [ -d "$dir" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dir" || fail "cannot mount a tmpfs on $dir"; fi',
  'done',
  'if [ -n "$resolver" ]; then bind_held "$resolver_held" "$resolver" ro; fi',
  `mkdir -p ${CONFINED_HOME} && chown "$uid:$gid" ${CONFINED_HOME} || fail "cannot make ${CONFINED_HOME}"`,
  // A hidden path under a directory that is now a fresh tmpfs is gone already.
  'for ((i = 0; i < ${#mounts[@]}; i += 3)); do',
  '  kind=${mounts[i]} target=${mounts[i + 2]}',
  '  case "$kind" in',
  '    dir) [ -e "$target" ] || continue; mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$target" || fail "cannot hide $target";;',
  '    file) [ -e "$target" ] || continue; mount --bind /dev/null "$target" || fail "cannot hide $target";;',
  '    *) bind_held "${held_sources[i]}" "$target" "$kind";;',
  '  esac',
  'done',
  `if [ -n "$spill" ]; then bind_held "$spill_held" ${SPILL_MOUNT} ro; fi`,
  'for fd in "${held_fds[@]}"; do exec {fd}<&-; done',
  // mount(8) keeps its notes in /run/mount; this /run is the command's own, so they go.
  'rm -rf /run/mount',
  'cd "$cwd" || fail "cannot enter $cwd"',
  // The command's environment as bubblewrap would give it: nothing of this script's own.
  'unset OLDPWD; export SHLVL=0',
  // This shell's notices ("Killed …" when the command dies of a signal) go nowhere; the
  // command keeps the real stderr. Not the last command of the script, so bash cannot exec
  // it and stop being pid 1.
  'exec {stderr_fd}>&2 2>/dev/null',
  '"$@" /bin/bash -c "$stage" colony-command "$command" 2>&"$stderr_fd" {stderr_fd}>&-',
  'exit $?',
].join('\n');

/**
 * The command line of one command under the weaker confinement, for machines without
 * bubblewrap (root only):
 *
 *   prlimit → setpriv --pdeathsig KILL → unshare (pid, mount, network unless allowed, IPC,
 *   UTS; the child killed with it) → the root stage above → setpriv (the agent's uid, no
 *   capabilities) → bash -c COMMAND
 *
 * The root stage stays as pid 1 and waits, rather than exec the command there: pid 1 of a
 * namespace ignores every signal it has no handler for, so the command would outlive SIGTERM.
 */
export function unshareArguments(plan: ConfinementPlan, cwd: string, command: string): string[] {
  const mounts = viewMounts(plan);
  const namespaces = ['--pid', '--fork', '--kill-child', '--mount', '--propagation', 'private', '--ipc', '--uts'];
  if (!plan.shareNetwork) namespaces.push('--net');
  const identity = plan.identity ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  return [
    ...prlimitArguments(plan),
    plan.tools.setpriv,
    '--pdeathsig',
    'KILL',
    '--',
    plan.tools.unshare,
    ...namespaces,
    '--',
    '/bin/bash',
    '-c',
    ROOT_STAGE,
    'colony-root-stage',
    String(identity.uid),
    String(identity.gid),
    cwd,
    plan.spillDirectory ?? '',
    resolverDirectory() ?? '',
    plan.shareNetwork ? '' : plan.tools.ip,
    commandStage(plan.prelude),
    command,
    String(mounts.length),
    ...mounts.flatMap((mount) => (mount.kind === 'hide' ? [mount.type === 'directory' ? 'dir' : 'file', '', mount.path] : [mount.writable ? 'rw' : 'ro', mount.source, mount.target])),
    ...setprivArguments(plan),
  ];
}
