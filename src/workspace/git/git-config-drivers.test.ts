import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverGitDirs, driverOverrides, parseValue } from './git-config-drivers.js';
import { runGit } from './git.js';

describe('driverOverrides', () => {
  let base: string;
  let gitDir: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'colony-drivers-'));
    gitDir = join(base, 'repo', '.git');
    await mkdir(gitDir, { recursive: true });
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const namesIn = (result: ReturnType<typeof driverOverrides>, kind: string): string[] => {
    if (!result.ok) throw new Error(result.error);
    return [...new Set(result.settings.filter(([key]) => key.startsWith(`${kind}.`)).map(([key]) => key.slice(kind.length + 1, key.lastIndexOf('.'))))];
  };

  it('finds drivers under every header form git accepts, and makes each harmless', async () => {
    await writeFile(
      join(gitDir, 'config'),
      [
        '[core]',
        '\tbare = false',
        '[filter "lfs"]',
        '\tclean = git-lfs clean -- %f',
        '[FILTER "Mixed Case"]',
        '[filter.Legacy]',
        '[filter.dotted "sub"]',
        '[core] [diff "same-line"] textconv = x',
        '  [merge "a\\"quote"]',
        '[remote "origin"]',
      ].join('\n'),
    );
    const result = driverOverrides([gitDir]);
    expect(namesIn(result, 'filter')).toEqual(['Mixed Case', 'dotted.sub', 'legacy', 'lfs']);
    expect(namesIn(result, 'diff')).toEqual(['same-line']);
    expect(namesIn(result, 'merge')).toEqual(['a"quote']);
    if (!result.ok) throw new Error(result.error);
    expect(result.settings).toEqual(
      expect.arrayContaining([
        ['filter.lfs.clean', ''],
        ['filter.lfs.smudge', ''],
        ['filter.lfs.process', ''],
        ['filter.lfs.required', 'false'],
        ['diff.same-line.textconv', 'cat'],
        ['merge.a"quote.driver', 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B'],
      ]),
    );
  });

  it('follows includes, relative to the including file, whatever their condition, and reads config.worktree through commondir', async () => {
    await mkdir(join(base, 'more'), { recursive: true });
    await writeFile(join(gitDir, 'config'), '[include]\n\tpath = ../../more/first.cfg ; a comment\n');
    await writeFile(join(base, 'more', 'first.cfg'), '[includeIf "onbranch:never/*"]\n\tpath = "second.cfg"\n[filter "first"]\n');
    await writeFile(join(base, 'more', 'second.cfg'), '[filter "second"]\n[include]\npath = first.cfg\n');
    const worktreeDir = join(gitDir, 'worktrees', 'w1');
    await mkdir(worktreeDir, { recursive: true });
    await writeFile(join(worktreeDir, 'commondir'), '../..\n');
    await writeFile(join(worktreeDir, 'config.worktree'), '[merge "worktree-only"]\n');
    expect(namesIn(driverOverrides([gitDir]), 'filter')).toEqual(['first', 'second']);
    const forWorktree = driverOverrides([worktreeDir]);
    expect(namesIn(forWorktree, 'filter')).toEqual(['first', 'second']);
    expect(namesIn(forWorktree, 'merge')).toEqual(['worktree-only']);
  });

  it('refuses an include it cannot resolve, and runGit then runs no git at all', async () => {
    await writeFile(join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n[include]\n\tpath = ~someone-else/hidden.cfg\n');
    await writeFile(join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    const result = driverOverrides([gitDir]);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/cannot resolve/) });
    const run = await runGit(join(base, 'repo'), ['init', '--quiet']);
    expect(run.code).toBe(128);
    expect(run.stderr).toMatch(/colony runs no git command in this repository: .*~someone-else\/hidden\.cfg/);
  });

  it('finds the git directory git would use from a subdirectory, through a .git file', async () => {
    await mkdir(join(base, 'checkout', 'deep', 'er'), { recursive: true });
    await writeFile(join(base, 'checkout', '.git'), `gitdir: ${gitDir}\n`);
    expect(discoverGitDirs(join(base, 'checkout', 'deep', 'er'))).toEqual([gitDir]);
    expect(discoverGitDirs(join(base, 'repo'))).toEqual([gitDir]);
  });
});

describe('parseValue', () => {
  it('reads values as git does: quotes, escapes, comments, inner blanks kept', () => {
    expect(parseValue(' plain value  ')).toBe('plain value');
    expect(parseValue(' "quoted ; not a comment" ; a comment')).toBe('quoted ; not a comment');
    expect(parseValue(' a\\tb # comment')).toBe('a\tb');
    expect(parseValue(' "with \\"escaped\\" quotes"')).toBe('with "escaped" quotes');
    expect(parseValue(' one\\\ntwo')).toBe('onetwo');
  });
});
