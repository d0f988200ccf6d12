/** How deep `isDiskFull` follows `cause`: errors wrap a few times, never more. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Error codes that mean the disk has no room left. SQLite turns a write that fails with
 * ENOSPC into SQLITE_FULL (better-sqlite3 puts the code on its error and keeps no errno), and
 * Node's own file functions fail with ENOSPC, or EDQUOT when the user's quota is used up,
 * which the person answers the same way: by freeing space.
 */
const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT']);

function codeOf(error: object): unknown {
  return 'code' in error ? error.code : undefined;
}

/**
 * True when `error`, or an error it was caused by, says the disk is full: a better-sqlite3
 * error with code SQLITE_FULL (what a store's write throws when the file cannot grow) or a
 * Node error with code ENOSPC or EDQUOT. The stores wrap write failures with a message of
 * their own and keep the original as `cause`, so the chain is followed. Anything else,
 * including SQLITE_IOERR (which gives no reason), is not taken for a full disk.
 */
export function isDiskFull(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH; depth += 1) {
    if (typeof current !== 'object' || current === null) return false;
    if (DISK_FULL_CODES.has(String(codeOf(current)))) return true;
    current = 'cause' in current ? current.cause : undefined;
  }
  return false;
}
