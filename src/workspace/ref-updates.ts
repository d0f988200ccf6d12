import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGit, setKeepsProcessAlive, spawnGit } from './git.js';

/**
 * Branch refs read in-process and moved by one long-lived `git update-ref --stdin`: reading
 * the trunk and swapping it are in every merge's serial section, where a git process per step
 * (about 10 ms of CPU each) would be the whole cost.
 */
export interface RefUpdates {
  /** The commit a branch points at, or null when the branch does not exist. */
  readBranch(branch: string): Promise<string | null>;
  /**
   * Moves every ref in `updates` from its `expected` commit to its `next` one, all or none
   * (one git transaction). 'moved' when a ref was not at `expected` (a lost race), with git's words.
   */
  swap(updates: readonly RefSwap[]): Promise<{ readonly ok: true } | { readonly ok: false; readonly moved: boolean; readonly error: string }>;
  close(): void;
}

export interface RefSwap {
  /** A full ref name, `refs/heads/...`. */
  readonly ref: string;
  readonly next: string;
  readonly expected: string;
}

const OID = /^[0-9a-f]{40}$/;

/** What `git update-ref --stdin` says for one transaction, line by line, until `commit: ok` or its death. */
class UpdateRefProcess {
  private child: ReturnType<typeof spawnGit> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cwd: string,
    private readonly message: string,
  ) {}

  /** Runs one transaction; transactions never interleave. */
  transaction(lines: readonly string[]): Promise<{ ok: true } | { ok: false; error: string }> {
    const run = this.queue.then(() => this.run(lines));
    this.queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    const child = this.child;
    this.child = null;
    if (child !== null) {
      child.stdin.end();
      setKeepsProcessAlive(child, false);
    }
  }

  private run(lines: readonly string[]): Promise<{ ok: true } | { ok: false; error: string }> {
    const child = this.process();
    return new Promise((resolve) => {
      let stdout = '';
      let stderr = '';
      const finish = (result: { ok: true } | { ok: false; error: string }): void => {
        child.stdout.off('data', onOut);
        child.stderr.off('data', onErr);
        child.off('exit', onExit);
        setKeepsProcessAlive(child, false);
        resolve(result);
      };
      const onOut = (chunk: Buffer): void => {
        stdout += chunk.toString('utf8');
        if (/^commit: ok$/m.test(stdout)) finish({ ok: true });
      };
      const onErr = (chunk: Buffer): void => {
        stderr += chunk.toString('utf8');
      };
      // A failed transaction ends the process (git dies on a failed prepare); the next one starts anew.
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.child === child) this.child = null;
        finish({ ok: false, error: stderr.trim() || `git update-ref --stdin ended (${code ?? signal ?? 'unknown'})` });
      };
      child.stdout.on('data', onOut);
      child.stderr.on('data', onErr);
      child.on('exit', onExit);
      setKeepsProcessAlive(child, true);
      child.stdin.write(['start', ...lines, 'prepare', 'commit', ''].join('\n'));
    });
  }

  private process(): ReturnType<typeof spawnGit> {
    if (this.child !== null) return this.child;
    const child = spawnGit(this.cwd, ['update-ref', '-m', this.message, '--stdin']);
    child.stdin.on('error', () => undefined);
    child.on('error', () => undefined);
    this.child = child;
    return child;
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
    // Read synchronously: 41 bytes, in the middle of a merge's turn on the trunk (see object-store.ts).
    const value = readLooseRef(join(this.gitDir, ref)) ?? undefined;
    if (value !== undefined && OID.test(value)) return value;
    // Packed, symbolic, or being rewritten by another tool: let git answer.
    const result = await runGit(this.cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    const commit = result.stdout.trim();
    return result.code === 0 && OID.test(commit) ? commit : null;
  }

  async swap(updates: readonly RefSwap[]) {
    const lines = updates.map((update) => `update ${update.ref} ${update.next} ${update.expected}`);
    const result = await this.updater.transaction(lines);
    if (result.ok) return { ok: true } as const;
    const moved = /but expected|unable to resolve reference|cannot lock ref/.test(result.error);
    return { ok: false, moved, error: result.error } as const;
  }

  close(): void {
    this.updater.close();
  }
}

export function createRefUpdates(cwd: string, gitDir: string): RefUpdates {
  return new FilesRefUpdates(cwd, gitDir);
}
