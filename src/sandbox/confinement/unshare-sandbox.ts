import { CONFINED_HOME, SPILL_MOUNT, bindsAroundHidden, commandStage, existingHiddenPaths, isInside, shownAgainOf, prlimitArguments, resolverDirectory, setprivArguments } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { mountLayoutOf } from './mount-layout.js';
import type { MountLayout } from './mount-layout.js';
import { COVER_FUNCTION, MOUNT_FUNCTIONS } from './mount-script.js';
import { NO_COVERS, coverOperations, planCovers, reachableWith, searchableBy } from './private-directories.js';
import type { PrivateDirectoryCovers } from './private-directories.js';

/** The directories the root stage replaces with fresh, empty ones. */
const FRESH_DIRECTORIES: readonly string[] = ['/tmp', '/run', '/dev/shm', '/var/tmp'];

/**
 * The root half of the weaker confinement, run as pid 1 of new pid and mount namespaces (and
 * new network, IPC and UTS ones): it gives the command its own /proc, /tmp, /run, /dev/shm
 * and /var/tmp (the resolver's directory shown again), covers the hidden paths, binds the workspace, the extra binds and the spill
 * directory (read-only) back in, then starts the command as the agent's uid and waits for it.
 * The sources are held open (a socket through its directory) before anything is hidden, and
 * bound from those descriptors, so a workspace inside a hidden directory (or inside /tmp) is
 * still reachable. The rest of the
 * file system is the host's, guarded by nothing but file permissions.
 *
 * Arguments: uid gid cwd workspace spill-directory-or-empty resolver-directory-or-empty
 * ip-or-empty (to bring up the loopback of a new network namespace) stage command, then the number of hidden directories and their paths, the number of hidden files
 * and their paths, the number of binds and, for each, source target rw|ro, how many of those (from
 * the first) are bound before the hiding (`bindsAroundHidden`), the number of
 * cover operations and each as `cover|show PATH` (`private-directories.ts`); the rest is the
 * command line that drops to the agent's uid, to which the stage and the command are appended.
 */
const ROOT_STAGE = [
  MOUNT_FUNCTIONS,
  COVER_FUNCTION,
  'uid=$1 gid=$2 cwd=$3 workspace=$4 spill=$5 resolver=$6 ip=$7 stage=$8 command=$9; shift 9',
  'count=$1; shift; hidden_dirs=("${@:1:count}"); shift "$count"',
  'count=$1; shift; hidden_files=("${@:1:count}"); shift "$count"',
  'count=$1; shift; binds=("${@:1:count*3}"); shift "$((count * 3))"',
  'before=$1; shift',
  'count=$1; shift; covers=("${@:1:count*2}"); shift "$((count * 2))"',
  'hold "$workspace" || fail "cannot open the workspace $workspace"; workspace_held=$held',
  'if [ -n "$spill" ]; then hold "$spill" || fail "cannot open $spill"; spill_held=$held; fi',
  'if [ -n "$resolver" ]; then hold "$resolver" || fail "cannot open $resolver"; resolver_held=$held; fi',
  'bind_held_paths=()',
  'for ((i = 0; i < ${#binds[@]}; i += 3)); do',
  '  hold "${binds[i]}" || fail "cannot open the bind source ${binds[i]}"',
  '  bind_held_paths+=("$held")',
  'done',
  // Private directories on the way to the workspace and the binds' targets: covered, with only those shown again.
  'cover_private "$((${#covers[@]} / 2))" "${covers[@]}"',
  'mount -t proc proc /proc || fail "cannot mount /proc"',
  // A new network namespace starts with its loopback down; bubblewrap brings it up, so do we.
  'if [ -n "$ip" ]; then "$ip" link set lo up || fail "cannot bring up the loopback interface"; fi',
  `for dir in ${FRESH_DIRECTORIES.join(' ')}; do`,
  '  if [ -d "$dir" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$dir" || fail "cannot mount a tmpfs on $dir"; fi',
  'done',
  'if [ -n "$resolver" ]; then bind_held "$resolver_held" "$resolver" ro; fi',
  `mkdir -p ${CONFINED_HOME} && chown "$uid:$gid" ${CONFINED_HOME} || fail "cannot make ${CONFINED_HOME}"`,
  // Binds whose targets hold a hidden path come first, so the hiding covers what they show.
  'for ((i = 0; i < before; i++)); do bind_held "${bind_held_paths[i]}" "${binds[i * 3 + 1]}" "${binds[i * 3 + 2]}"; done',
  // A hidden path under a directory that is now a fresh tmpfs is gone already.
  'for path in "${hidden_dirs[@]}"; do [ -e "$path" ] || continue; mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$path" || fail "cannot hide $path"; done',
  'for path in "${hidden_files[@]}"; do [ -e "$path" ] || continue; mount --bind /dev/null "$path" || fail "cannot hide $path"; done',
  'bind_held "$workspace_held" "$workspace" rw',
  'for ((i = before; i < ${#bind_held_paths[@]}; i++)); do bind_held "${bind_held_paths[i]}" "${binds[i * 3 + 1]}" "${binds[i * 3 + 2]}"; done',
  `if [ -n "$spill" ]; then bind_held "$spill_held" ${SPILL_MOUNT} ro; fi`,
  'close_held',
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
  const covers = unshareCovers(plan);
  const hidden = existingHiddenPaths(plan.hidden, plan.identity, plan.identity === null ? undefined : reachableWith(covers, plan.identity), shownAgainOf(plan));
  const binds = bindsAroundHidden(plan.binds, hidden);
  const directories = hidden.filter((entry) => entry.kind === 'directory').map((entry) => entry.path);
  const files = hidden.filter((entry) => entry.kind === 'file').map((entry) => entry.path);
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
    plan.workspace,
    plan.spillDirectory ?? '',
    resolverDirectory() ?? '',
    plan.shareNetwork ? '' : plan.tools.ip,
    commandStage(plan.prelude),
    command,
    String(directories.length),
    ...directories,
    String(files.length),
    ...files,
    String(plan.binds.length),
    ...[...binds.before, ...binds.after].flatMap((bind) => [bind.source, bind.target, bind.writable ? 'rw' : 'ro']),
    String(binds.before.length),
    String(covers.covers.length + covers.shown.length),
    ...coverOperations(covers),
    ...setprivArguments(plan),
  ];
}

/** What a command under the unshare fallback finds where: the view the root stage builds. */
export function unshareLayout(plan: ConfinementPlan): MountLayout {
  return mountLayoutOf(plan, unshareCovers(plan), FRESH_DIRECTORIES);
}

/**
 * The private directories this stage covers: those on the way to what the agent itself must
 * reach, its workspace and the binds' targets. Sources need nothing: the stage holds them as
 * root. Targets under the directories the stage replaces with a fresh tmpfs need nothing either:
 * root makes the way to them there.
 */
function unshareCovers(plan: ConfinementPlan): PrivateDirectoryCovers {
  if (!plan.coverPrivateDirectories || plan.identity === null) return NO_COVERS;
  const targets = [plan.workspace, ...plan.binds.map((bind) => bind.target)].filter((path) => !FRESH_DIRECTORIES.some((dir) => isInside(dir, path)));
  return planCovers(targets, searchableBy(plan.identity));
}
