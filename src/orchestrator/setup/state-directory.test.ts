import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultStateDir, locateDefaultStateDir, prepareStateDir } from './state-directory.js';

let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'colony-state-dir-'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('prepareStateDir', () => {
  it('creates the directory when its parent exists', () => {
    expect(prepareStateDir(join(base, 'state'))).toEqual({ ok: true });
    expect(existsSync(join(base, 'state'))).toBe(true);
  });

  it('refuses a file and a missing parent, saying what to do', () => {
    writeFileSync(join(base, 'file'), 'x');
    const file = prepareStateDir(join(base, 'file'));
    expect(file).toMatchObject({ ok: false, error: expect.stringMatching(/is a file, not a directory: pass another path with --state/) });
    const deep = prepareStateDir(join(base, 'missing', 'state'));
    expect(deep).toMatchObject({ ok: false, error: expect.stringMatching(/missing does not exist/) });
    expect(existsSync(join(base, 'missing'))).toBe(false);
  });
});

describe('defaultStateDir', () => {
  const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: base } }).trim();
  const repository = (): string => {
    const repo = join(base, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '--quiet', '--initial-branch=main');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'start');
    return repo;
  };

  it('is colony in the common git directory, from the checkout, a folder of it and a linked worktree alike', () => {
    const repo = repository();
    const expected = join(base, 'repo', '.git', 'colony');
    expect(locateDefaultStateDir(repo)).toEqual({ path: expected, inCheckout: false });
    mkdirSync(join(repo, 'src'));
    expect(defaultStateDir(join(repo, 'src'))).toBe(expected);
    git(repo, 'worktree', 'add', '--quiet', join(base, 'linked'));
    expect(defaultStateDir(join(base, 'linked'))).toBe(expected);
    expect(git(join(base, 'linked'), 'rev-parse', '--path-format=absolute', '--git-common-dir')).toBe(join(base, 'repo', '.git'));
  });

  it('follows a .git file with a relative path, as a submodule has', () => {
    const repo = repository();
    const moved = join(base, 'elsewhere.git');
    execFileSync('mv', [join(repo, '.git'), moved]);
    writeFileSync(join(repo, '.git'), 'gitdir: ../elsewhere.git\n');
    expect(git(repo, 'rev-parse', '--path-format=absolute', '--git-common-dir')).toBe(moved);
    expect(defaultStateDir(repo)).toBe(join(moved, 'colony'));
  });

  it("stays the checkout's .colony while an earlier version's runs are in it, and not for prompt overrides alone", () => {
    const repo = repository();
    mkdirSync(join(repo, '.colony', 'prompts'), { recursive: true });
    expect(defaultStateDir(repo)).toBe(join(repo, '.git', 'colony'));
    writeFileSync(join(repo, '.colony', 'colony.db'), '');
    expect(locateDefaultStateDir(repo)).toEqual({ path: join(repo, '.colony'), inCheckout: true });
  });

  it('is <dir>/.colony outside any repository and for a directory that does not exist', () => {
    expect(locateDefaultStateDir(base)).toEqual({ path: join(base, '.colony'), inCheckout: false });
    const repo = repository();
    expect(defaultStateDir(join(repo, 'missing'))).toBe(join(repo, 'missing', '.colony'));
  });
});
