/**
 * Bash functions for the root stages that build a command's mount namespace before the uid is
 * dropped (the unshare fallback's root stage, and the stage that covers private directories
 * before bubblewrap). Sources are held open before anything is mounted over them and bound
 * from those descriptors, so a path under a directory about to be covered is still reachable.
 * Mounts are made with `-n`: a stage may share the host's /run, where mount(8) keeps notes.
 */
export const MOUNT_FUNCTIONS = [
  'fail() { echo "colony: $*" >&2; exit 125; }',
  // Holds a source open and prints the path that reaches it later: a directory or file through
  // its own descriptor, anything else (a socket, which cannot be opened) through its parent's.
  'held_fds=()',
  'hold() {',
  '  local fd',
  '  if [ -d "$1" ] || [ -f "$1" ]; then exec {fd}<"$1" || return 1; held="/proc/self/fd/$fd"',
  '  else exec {fd}<"$(dirname "$1")" || return 1; held="/proc/self/fd/$fd/$(basename "$1")"; fi',
  '  held_fds+=("$fd")',
  '}',
  'bind_held() { # held-path target ro|rw',
  '  if [ -d "$1" ]; then mkdir -p "$2"; else mkdir -p "$(dirname "$2")"; [ -e "$2" ] || : > "$2"; fi',
  '  mount -n --no-canonicalize --bind "$1" "$2" || fail "cannot bind $2"',
  '  if [ "$3" = ro ]; then mount -n --no-canonicalize -o remount,bind,ro "$2" || fail "cannot make $2 read-only"; fi',
  '}',
  'close_held() { local fd; for fd in "${held_fds[@]}"; do exec {fd}<&-; done; held_fds=(); }',
].join('\n');

/**
 * `cover_private COUNT OP PATH…`: carries out a `PrivateDirectoryCovers` given as `cover PATH`
 * and `show PATH` pairs in mount order. Every shown path is held first; then each cover gets
 * an empty tmpfs of mode 0711 (the agent may pass through, not list), the directories on the way
 * to a shown path are made in it with the same mode, and the shown path is bound back from its
 * descriptor, as writable as on the host, with what is mounted inside it (`--rbind`: an overlay
 * workspace or a view inside a shown git directory is a mount of its own). What a cover holds belongs to root, so the agent's uid
 * cannot write there. Each step is one program at most (no subshells, no `dirname`): this runs
 * before every command.
 */
export const COVER_FUNCTION = [
  'cover_private() {',
  '  local count=$1 i n=0 path parent way; shift',
  '  local operations=("${@:1:count*2}") shown=()',
  '  for ((i = 0; i < ${#operations[@]}; i += 2)); do',
  '    [ "${operations[i]}" = show ] || continue',
  '    hold "${operations[i + 1]}" || fail "cannot open ${operations[i + 1]}"',
  '    shown+=("$held")',
  '  done',
  '  for ((i = 0; i < ${#operations[@]}; i += 2)); do',
  '    path=${operations[i + 1]}',
  '    if [ "${operations[i]}" = cover ]; then',
  '      mount -n -t tmpfs -o mode=0711,nosuid,nodev,size=1m colony-private "$path" || fail "cannot cover $path"',
  '      continue',
  '    fi',
  '    way=(); parent=${path%/*}',
  '    while [ -n "$parent" ] && [ ! -e "$parent" ]; do way=("$parent" "${way[@]}"); parent=${parent%/*}; done',
  '    if [ -d "${shown[n]}" ]; then [ -e "$path" ] || way+=("$path"); fi',
  '    if [ ${#way[@]} -gt 0 ]; then mkdir -m 0711 "${way[@]}" || fail "cannot make the way to $path"; fi',
  '    [ -e "$path" ] || : > "$path" || fail "cannot make $path"',
  '    mount -n --no-canonicalize --rbind "${shown[n]}" "$path" || fail "cannot show $path"',
  '    n=$((n + 1))',
  '  done',
  '}',
].join('\n');
