import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';


export interface ExampleRepository {
  readonly dir: string;
  git(...args: string[]): string;
  cleanup(): void;
}

/** A real git repository holding a fresh copy of a bundled example (text-kit by default), on branch main. */
export function createExampleRepository(example = 'text-kit'): ExampleRepository {
  const base = mkdtempSync(join(tmpdir(), 'colony-test-'));
  // Like a project directory, not a private temporary one: sandboxed agents run as other users and must get through to their workspaces.
  chmodSync(base, 0o755);
  const dir = join(base, example);
  cpSync(new URL(`../../examples/${example}/`, import.meta.url), dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@colony.invalid', '-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const cleanup = () => {
    unmountUnder(base);
    rmSync(base, { recursive: true, force: true });
  };
  return { dir, git, cleanup };
}

/**
 * Unmounts whatever is still mounted below `base`: overlay workspaces of a run that was
 * killed, which nothing else would take down, and which make removing the directory fail.
 */
export function unmountUnder(base: string): void {
  let mounts: string[];
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((line) => line.split(' ')[1] ?? '');
  } catch {
    return;
  }
  const below = mounts.filter((path) => path.startsWith(`${base}/`)).sort((a, b) => b.length - a.length);
  for (const path of below) {
    try {
      execFileSync('umount', ['-l', path], { stdio: 'ignore' });
    } catch {
      // Already gone, or not ours to take down: the removal below says so if it matters.
    }
  }
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the `colony` command in this process, capturing what it prints. */
export async function runCli(
  argv: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; signal?: AbortSignal } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, stdout, stderr };
}

/** Runs the project's own tests in `dir` for real, as a person would. */
export function projectTestsPass(dir: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: { test: string } };
    execFileSync('sh', ['-c', manifest.scripts.test], { cwd: dir, stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}
