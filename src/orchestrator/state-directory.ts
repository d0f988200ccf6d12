import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The state directory a repository's runs use unless told otherwise. */
export function defaultStateDir(repoDir: string): string {
  return join(resolve(repoDir), '.colony');
}

/** The events database inside a state directory. */
export function eventsDatabasePath(stateDir: string): string {
  return join(stateDir, 'colony.db');
}

export type Prepared = { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * Makes sure the state directory exists and is a directory. Only its last component is
 * created: a parent that does not exist is more likely a typo than a wish.
 */
export function prepareStateDir(stateDir: string): Prepared {
  try {
    if (existsSync(stateDir)) {
      if (!statSync(stateDir).isDirectory()) {
        return { ok: false, error: `the state directory ${stateDir} is a file, not a directory: pass another path with --state` };
      }
      return { ok: true };
    }
    const parent = dirname(stateDir);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) {
      return { ok: false, error: `cannot make the state directory ${stateDir}: ${parent} does not exist. Create it, or pass another --state` };
    }
    mkdirSync(stateDir);
    return { ok: true };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `cannot use the state directory ${stateDir}: ${reason}. Pass another path with --state` };
  }
}

export interface RunLock {
  release(): void;
}

export type LockResult = { readonly ok: true; readonly lock: RunLock } | { readonly ok: false; readonly error: string };

/**
 * Takes the state directory for one run: two runs on one state directory would interleave
 * their writes to the event log and fight over the checkout. A lock left by a process that no
 * longer exists on this machine is taken over.
 */
export function lockStateDir(stateDir: string, pid: number = process.pid): LockResult {
  const path = join(stateDir, 'run.lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const descriptor = openSync(path, 'wx');
      writeSync(descriptor, JSON.stringify({ pid, host: hostname(), since: new Date().toISOString() }));
      closeSync(descriptor);
      return { ok: true, lock: { release: () => rmSync(path, { force: true }) } };
    } catch (error) {
      if (!isCode(error, 'EEXIST')) {
        const reason = error instanceof Error ? error.message : String(error);
        return { ok: false, error: `cannot lock the state directory ${stateDir}: ${reason}` };
      }
    }
    const holder = readHolder(path);
    if (holder !== null && holder.host === hostname() && isAlive(holder.pid)) {
      return {
        ok: false,
        error:
          `another colony run (process ${holder.pid}, since ${holder.since}) is using ${stateDir}. ` +
          'Wait for it to finish or stop it, or give this run its own state directory with --state DIR.',
      };
    }
    if (holder !== null && holder.host !== hostname()) {
      return {
        ok: false,
        error: `the state directory ${stateDir} is locked by a colony run on ${holder.host} (process ${holder.pid}); if that run is gone, delete ${path}`,
      };
    }
    rmSync(path, { force: true });
  }
  return { ok: false, error: `cannot lock the state directory ${stateDir}: another run took it at the same moment` };
}

interface LockHolder {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

function readHolder(path: string): LockHolder | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return null;
    return { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? 'an unknown time') };
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, 'EPERM');
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}
