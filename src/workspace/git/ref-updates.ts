import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGit, setKeepsProcessAlive, spawnGit } from './git.js';

/**
 * Branch refs read in-process and moved by one long-lived `git update-ref --stdin`: reading
 * main and swapping it are in every merge's serial section, where a git process per step
 * (about 10 ms of CPU each) would be the whole cost.
 */
export interface RefUpdates {
  /** The commit a branch points at, or null when the branch does not exist. */
  readBranch(branch: string): Promise<string | null>;
  /**
   * Moves every ref in `updates` from its `expected` commit to its `next` one, all or none
   * (one git transaction). 'moved' when a ref was not at `expected` (a lost race), with git's
   * words; 'unanswered' when git ended without saying why (killed, or already dead when asked):
   * the refs may or may not have moved, so read them before trying again.
   */
  swap(updates: readonly RefSwap[]): Promise<SwapResult>;
  close(): void;
}

export type SwapResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly moved: boolean; readonly unanswered: boolean; readonly error: string };

export interface RefSwap {
  /** A full ref name, `refs/heads/...`. */
  readonly ref: string;
  readonly next: string;
  readonly expected: string;
}

const OID = /^[0-9a-f]{40}$/;

type TransactionResult = { ok: true } | { ok: false; error: string; unanswered: boolean };

/** A transaction that has not answered in this long is taken as lost: the child is killed. */
const TRANSACTION_TIMEOUT_MS = 30_000;

/**
 * One `git update-ref --stdin` child. Its end (an exit, a failure to start, a kill) is watched
 * for its whole life, so a transaction sent to a child that died while idle fails at once
 * instead of waiting for an answer that cannot come.
 */
class UpdateRefChild {
  readonly process: ReturnType<typeof spawnGit>;
  ended = false;
  private stdout = '';
  private stderr = '';
  private current: ((result: TransactionResult) => void) | null = null;

  constructor(cwd: string, message: string) {
    this.process = spawnGit(cwd, ['update-ref', '-m', message, '--stdin']);
    this.process.stdin.on('error', () => undefined);
    this.process.stdout.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString('utf8');
      if (/^commit: ok$/m.test(this.stdout)) this.settle({ ok: true });
    });
    this.process.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.process.on('error', (error) => this.end(error.message));
    // 'close', not 'exit': by then everything git wrote to stderr (its reason) has arrived.
    this.process.on('close', (code, signal) => this.end(`git update-ref --stdin ended (${code ?? signal ?? 'unknown'})`));
    setKeepsProcessAlive(this.process, false);
  }

  /** Runs one transaction; the caller never sends the next before this one settled. */
  run(lines: readonly string[]): Promise<TransactionResult> {
    if (this.ended) return Promise.resolve({ ok: false, error: this.stderr.trim() || 'git update-ref --stdin had ended', unanswered: this.stderr.trim() === '' });
    return new Promise((resolve) => {
      this.stdout = '';
      this.stderr = '';
      const timer = setTimeout(() => this.end(`git update-ref --stdin did not answer within ${TRANSACTION_TIMEOUT_MS / 1000} s`), TRANSACTION_TIMEOUT_MS);
      this.current = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
      setKeepsProcessAlive(this.process, true);
      this.process.stdin.write(['start', ...lines, 'prepare', 'commit', ''].join('\n'));
    });
  }

  end(reason: string): void {
    if (!this.ended) {
      this.ended = true;
      this.process.stdin.end();
      this.process.kill();
    }
    // A failed transaction ends the process (git dies on a failed prepare), with its reason on stderr.
    const said = this.stderr.trim();
    this.settle({ ok: false, error: said || reason, unanswered: said === '' });
  }

  private settle(result: TransactionResult): void {
    const current = this.current;
    this.current = null;
    setKeepsProcessAlive(this.process, false);
    current?.(result);
  }
}

/** Transactions through a long-lived `git update-ref --stdin`, one at a time, started anew after each failure. */
class UpdateRefProcess {
  private child: UpdateRefChild | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cwd: string,
    private readonly message: string,
  ) {}

  /** Runs one transaction; transactions never interleave. */
  transaction(lines: readonly string[]): Promise<TransactionResult> {
    const run = this.queue.then(() => {
      if (this.child === null || this.child.ended) this.child = new UpdateRefChild(this.cwd, this.message);
      return this.child.run(lines);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    const child = this.child;
    this.child = null;
    if (child !== null && !child.ended) {
      child.process.stdin.end();
      setKeepsProcessAlive(child.process, false);
    }
  }
}

function readLooseRef(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

class FilesRefUpdates implements RefUpdates {
  private readonly updater: UpdateRefProcess;

  constructor(
    private readonly cwd: string,
    private readonly gitDir: string,
  ) {
    this.updater = new UpdateRefProcess(cwd, 'colony: merge');
  }

  async readBranch(branch: string): Promise<string | null> {
    const ref = `refs/heads/${branch}`;
    // Read synchronously: 41 bytes, in the middle of a merge's turn on main (see object-store.ts).
    const value = readLooseRef(join(this.gitDir, ref)) ?? undefined;
    if (value !== undefined && OID.test(value)) return value;
    // Packed, symbolic, or being rewritten by another tool: let git answer.
    const result = await runGit(this.cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    const commit = result.stdout.trim();
    return result.code === 0 && OID.test(commit) ? commit : null;
  }

  async swap(updates: readonly RefSwap[]): Promise<SwapResult> {
    const lines = updates.map((update) => `update ${update.ref} ${update.next} ${update.expected}`);
    const result = await this.updater.transaction(lines);
    if (result.ok) return { ok: true };
    const moved = /but expected|unable to resolve reference|cannot lock ref/.test(result.error);
    return { ok: false, moved, unanswered: result.unanswered, error: result.error };
  }

  close(): void {
    this.updater.close();
  }
}

export function createRefUpdates(cwd: string, gitDir: string): RefUpdates {
  return new FilesRefUpdates(cwd, gitDir);
}
