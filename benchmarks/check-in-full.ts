import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failureLines } from '../src/orchestrator/green/check-failures.js';
import { runGit } from '../src/workspace/git/git.js';

/** What the project's check prints on one commit when nothing of its output is cut. */
export interface FullCheck {
  readonly passed: boolean;
  readonly outputBytes: number;
  /** Every failure line in the whole output, read as colony reads them (`failureLines`), with no limit; none when it passed. */
  readonly failures: readonly string[];
}

/**
 * Runs `command` on `commit` of the repository in a detached worktree of its own, keeping all
 * of its output: what a green snapshot of that commit could have seen, to hold against what it
 * recorded.
 */
export async function checkInFull(repoDir: string, commit: string, command: string): Promise<FullCheck> {
  const base = mkdtempSync(join(tmpdir(), 'colony-bench-check-'));
  const dir = join(base, 'view');
  const added = await runGit(repoDir, ['worktree', 'add', '--detach', dir, commit]);
  if (added.code !== 0) throw new Error(`git worktree add ${commit} failed: ${added.stderr}`);
  try {
    const run = spawnSync('bash', ['-c', `(${command}) 2>&1`], { cwd: dir, encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
    const output = run.stdout ?? '';
    const passed = run.status === 0;
    return { passed, outputBytes: Buffer.byteLength(output), failures: passed ? [] : failureLines(output, Number.MAX_SAFE_INTEGER) };
  } finally {
    await runGit(repoDir, ['worktree', 'remove', '--force', dir]);
    rmSync(base, { recursive: true, force: true });
  }
}
