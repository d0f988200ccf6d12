import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeFailure, runGit } from '../git/git.js';

/**
 * A real git repository in a fresh temporary directory, with one commit on `main`, for
 * tests that need git itself rather than a stand-in. Every git call goes through `runGit`,
 * so nothing depends on the machine's git config.
 */
export interface TemporaryRepository {
  /** The temporary directory; the repository is its `repo` subdirectory. */
  readonly base: string;
  readonly root: string;
  /** Runs git in `cwd` (default: the repository) and returns stdout; throws on failure. */
  git(args: readonly string[], cwd?: string): Promise<string>;
  write(path: string, text: string, cwd?: string): Promise<void>;
  read(path: string, cwd?: string): Promise<string>;
  /** Stages everything and commits it in `cwd`; returns the new commit. */
  commitAll(message: string, cwd?: string): Promise<string>;
  remove(): Promise<void>;
}

export async function createTemporaryRepository(files: Readonly<Record<string, string>> = { 'README.md': '# project\n' }): Promise<TemporaryRepository> {
  const base = await mkdtemp(join(tmpdir(), 'colony-workspace-'));
  const root = join(base, 'repo');
  await mkdir(root);
  const git = async (args: readonly string[], cwd: string = root): Promise<string> => {
    const result = await runGit(cwd, args);
    if (result.code !== 0) throw new Error(describeFailure(args, result));
    return result.stdout;
  };
  const write = async (path: string, text: string, cwd: string = root): Promise<void> => {
    await mkdir(dirname(join(cwd, path)), { recursive: true });
    await writeFile(join(cwd, path), text);
  };
  const commitAll = async (message: string, cwd: string = root): Promise<string> => {
    await git(['add', '--all'], cwd);
    await git(['commit', '--quiet', '-m', message], cwd);
    return (await git(['rev-parse', 'HEAD'], cwd)).trim();
  };
  await git(['init', '--quiet', '--initial-branch=main']);
  for (const [path, text] of Object.entries(files)) await write(path, text);
  await commitAll('Start');
  return {
    base,
    root,
    git,
    write,
    read: (path, cwd = root) => readFile(join(cwd, path), 'utf8'),
    commitAll,
    // A git the racers started may still be finishing a write as the test ends; rm retries on ENOTEMPTY.
    remove: () => rm(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }),
  };
}
