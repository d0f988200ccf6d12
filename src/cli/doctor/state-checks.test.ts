import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRepository } from '../../workspace/git/repository.js';
import { checkRepository, checkRepositoryPath } from './repository-checks.js';
import { checkDisk, checkOverlay, checkStateDir, type FileSystemSpace } from './state-checks.js';

const directories: string[] = [];

afterEach(() => {
  for (const dir of directories.splice(0)) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colony-doctor-'));
  directories.push(dir);
  return dir;
}

function repositoryIn(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  return dir;
}

const GiB = 1024 ** 3;
const space = (freeBytes: number, totalBytes = 100 * GiB): FileSystemSpace => ({ bavail: freeBytes / 4096, blocks: totalBytes / 4096, bsize: 4096 });

describe('the repository checks', () => {
  it('pass a checkout with a commit, and split a refusal into its problem and its fix', async () => {
    const repo = repositoryIn(join(scratch(), 'project'));
    expect(checkRepository(repo, await openRepository(repo))).toEqual({ name: 'repository', status: 'pass', detail: `${repo}, on main` });
    const plain = scratch();
    expect(checkRepository(plain, await openRepository(plain))).toEqual({
      name: 'repository',
      status: 'fail',
      detail: `${plain} is not inside a git repository`,
      fix: 'Run `git init` there and make a first commit, or pass the path of an existing repository with --repo',
    });
  });

  it('pass a private directory above the repository where the sandbox covers it, and name it with the chmod where it cannot', async () => {
    const base = scratch();
    chmodSync(base, 0o755);
    const repo = repositoryIn(join(base, 'private', 'project'));
    chmodSync(join(base, 'private'), 0o700);
    const opened = await openRepository(repo);
    if (!opened.ok) throw new Error(opened.error);
    const stateDir = join(opened.repo.gitDir, 'colony');
    const root = { isRoot: true, mountNamespaceProblem: () => null };
    // As root, where a mount namespace can be made: the sandbox covers it, nothing to change.
    expect(checkRepositoryPath(opened.repo, stateDir, 'bubblewrap', root)).toEqual({
      name: 'repository path',
      status: 'pass',
      detail: expect.stringContaining(`agents run as other uids, who may not enter ${join(base, 'private')}; each command gets it covered`),
    });
    // The unshare fallback runs in a mount namespace of its own: it covers too.
    const refused = { isRoot: true, mountNamespaceProblem: () => 'a mount namespace could not be made: unshare: unshare failed: Operation not permitted' };
    expect(checkRepositoryPath(opened.repo, stateDir, 'unshare', refused)).toMatchObject({ status: 'pass' });
    // Where root cannot make one, bubblewrap cannot get through: the directory, why, and the chmod.
    expect(checkRepositoryPath(opened.repo, stateDir, 'bubblewrap', refused)).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(new RegExp(`cannot get through ${join(base, 'private')} \\(only its owner may enter it\\).*\\(a mount namespace could not be made: unshare: unshare failed: Operation not permitted\\)$`)),
      fix: expect.stringContaining(`\`chmod o+x ${join(base, 'private')}\``),
    });
    // Agents of a colony that is not root, or unconfined commands, run as the user: nothing to get through.
    expect(checkRepositoryPath(opened.repo, stateDir, 'bubblewrap', { ...refused, isRoot: false })).toMatchObject({ status: 'pass' });
    expect(checkRepositoryPath(opened.repo, stateDir, 'none', refused)).toMatchObject({ status: 'pass' });
    chmodSync(join(base, 'private'), 0o711);
    expect(checkRepositoryPath(opened.repo, stateDir, 'bubblewrap', refused)).toMatchObject({ status: 'pass', detail: expect.stringContaining('can get through every directory') });
  });

  it('fail a git directory the agents may not enter themselves, which no covering helps', async () => {
    const repo = repositoryIn(join(scratch(), 'project'));
    const opened = await openRepository(repo);
    if (!opened.ok) throw new Error(opened.error);
    chmodSync(opened.repo.gitDir, 0o700);
    try {
      expect(checkRepositoryPath(opened.repo, join(opened.repo.gitDir, 'colony'), 'bubblewrap', { isRoot: true, mountNamespaceProblem: () => null })).toEqual({
        name: 'repository path',
        status: 'fail',
        detail: `the agents run as other users, who may not enter the repository's git directory ${opened.repo.gitDir} (only its owner may), and every workspace reads it`,
        fix: `let others in with \`chmod o+rx ${opened.repo.gitDir}\`, or keep the repository somewhere they can read`,
      });
    } finally {
      chmodSync(opened.repo.gitDir, 0o755);
    }
  });
});

describe('the state directory, disk and overlay checks', () => {
  it('pass a state directory that can be made or written, and leave nothing behind', async () => {
    const home = scratch();
    expect(await checkStateDir(join(home, '.colony'))).toMatchObject({ status: 'pass', detail: expect.stringContaining('can be made') });
    mkdirSync(join(home, '.colony'));
    expect(await checkStateDir(join(home, '.colony'))).toMatchObject({ status: 'pass', detail: `${join(home, '.colony')} can be written` });
    expect(readdirSync(home)).toEqual(['.colony']);
    expect(readdirSync(join(home, '.colony'))).toEqual([]);
  });

  it('fail a state directory that is a file, or whose parent does not exist', async () => {
    const home = scratch();
    writeFileSync(join(home, 'state'), '');
    expect(await checkStateDir(join(home, 'state'))).toMatchObject({ status: 'fail', detail: `${join(home, 'state')} is a file, not a directory`, fix: expect.stringContaining('--state') });
    expect(await checkStateDir(join(home, 'missing', 'state'))).toMatchObject({ status: 'fail', fix: `create ${join(home, 'missing')}, or pass another path with --state` });
  });

  it('measure the free space where the state goes: fail below the reserve, warn when low', async () => {
    const stateDir = join(scratch(), '.colony');
    const measured: string[] = [];
    const statfs = (free: number) => async (path: string) => {
      measured.push(path);
      return space(free);
    };
    expect(await checkDisk(stateDir, statfs(50 * GiB))).toMatchObject({ status: 'pass', detail: expect.stringContaining('workspaces may take 10 GB together') });
    expect(measured).toEqual([dirname(stateDir)]);
    expect(await checkDisk(stateDir, statfs(GiB))).toMatchObject({ status: 'warn', detail: expect.stringContaining('only 1 GB free') });
    expect(await checkDisk(stateDir, statfs(100 * 1024 ** 2))).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('below 256 MB no agent starts'),
      fix: expect.stringContaining(`colony clean --state ${stateDir}`),
    });
    const broken = async (): Promise<FileSystemSpace> => {
      throw new Error('EIO: i/o error, statfs');
    };
    expect(await checkDisk(stateDir, broken)).toMatchObject({ status: 'fail', detail: expect.stringContaining('EIO') });
  });

  it('pass overlay mounts that work, warn of worktrees where they do not, and remove the probe directory', async () => {
    const home = scratch();
    const probed: string[] = [];
    const works = await checkOverlay(join(home, '.colony'), async (dir) => {
      probed.push(dir);
      return { ok: true };
    });
    expect(works).toMatchObject({ status: 'pass' });
    const refused = await checkOverlay(join(home, '.colony'), async () => ({ ok: false, error: 'mounting an overlay needs root, and colony is not running as root' }));
    expect(refused).toMatchObject({ status: 'warn', detail: 'mounting an overlay needs root, and colony is not running as root, so each workspace will be a git worktree (a full checkout)', fix: expect.stringContaining('root') });
    expect(probed[0]?.startsWith(join(home, '.colony-doctor-overlay-'))).toBe(true);
    expect(existsSync(probed[0] ?? '')).toBe(false);
    expect(readdirSync(home)).toEqual([]);
  });
});
