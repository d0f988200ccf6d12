import { readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGit, runGitSequence } from './git.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

describe('runGit', () => {
  let repo: TemporaryRepository;
  beforeEach(async () => {
    repo = await createTemporaryRepository();
  });
  afterEach(async () => {
    await repo.remove();
  });

  it('returns a non-zero exit as data instead of throwing', async () => {
    const result = await runGit(repo.root, ['rev-parse', '--verify', 'refs/heads/no-such-branch']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Needed a single revision/);
  });

  it('reports a missing directory as a failed run', async () => {
    const result = await runGit(`${repo.base}/missing`, ['status']);
    expect(result.code).toBe(127);
    expect(result.stderr).toMatch(/could not run git/);
  });

  it('feeds input to stdin', async () => {
    const result = await runGit(repo.root, ['hash-object', '--stdin'], { input: 'hello\n' });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('commits as colony whatever identity the environment or config holds', async () => {
    await repo.git(['config', 'user.name', 'Someone Else']);
    await repo.git(['config', 'user.useConfigOnly', 'true']);
    await repo.write('a.txt', 'a\n');
    await repo.commitAll('Add a');
    const author = await repo.git(['log', '-1', '--format=%an <%ae>|%cn <%ce>']);
    expect(author.trim()).toBe('colony <colony@localhost>|colony <colony@localhost>');
  });

  it('ignores GIT_* variables inherited from the parent, such as a hook would leave', async () => {
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = `${repo.base}/elsewhere`;
    try {
      const result = await runGit(repo.root, ['rev-parse', '--show-toplevel']);
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(repo.root);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });

  it('does not pass API keys or other secrets to git and what it runs', async () => {
    process.env.COLONY_TEST_API_KEY = 'sk-never-shown';
    try {
      // An alias starting with ! runs a shell command with git's environment.
      const result = await runGit(repo.root, ['-c', 'alias.showenv=!env', 'showenv']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('PATH=');
      expect(result.stdout).not.toContain('sk-never-shown');
    } finally {
      delete process.env.COLONY_TEST_API_KEY;
    }
  });

  it('runs git in its own process group, out of reach of a Ctrl-C meant for colony', async () => {
    const ownGroup = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ')[2];
    const result = await runGit(repo.root, ['-c', 'alias.group=!cut -d" " -f5 /proc/$$/stat', 'group']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+$/);
    expect(result.stdout.trim()).not.toBe(ownGroup);
  });

  it('commits even when the repository asks for failing hooks and signing', async () => {
    await repo.write('hooks/pre-commit', '#!/bin/sh\nexit 1\n');
    await repo.git(['config', 'core.hooksPath', `${repo.root}/hooks`]);
    await repo.git(['config', 'commit.gpgSign', 'true']);
    await repo.git(['config', 'gpg.program', 'false']);
    await chmod(`${repo.root}/hooks/pre-commit`, 0o755);
    await repo.write('b.txt', 'b\n');
    await repo.git(['add', 'b.txt']);
    // The hook is live: re-enabling it on the command line makes the commit fail.
    const unprotected = await runGit(repo.root, ['-c', `core.hooksPath=${repo.root}/hooks`, 'commit', '--no-gpg-sign', '-m', 'x']);
    expect(unprotected.code).not.toBe(0);
    const result = await runGit(repo.root, ['commit', '--quiet', '-m', 'With hostile config']);
    expect(result.code).toBe(0);
    expect((await repo.git(['log', '-1', '--format=%s'])).trim()).toBe('With hostile config');
  });

  it('runs a sequence of git commands as one child, stopping at the first failure, with quoting intact', async () => {
    await repo.write("it's here.txt", 'quoted\n');
    const both = await runGitSequence(repo.root, [['add', '--all'], ['write-tree']]);
    expect(both.code).toBe(0);
    expect(await repo.git(['ls-tree', '--name-only', both.stdout.trim()])).toContain("it's here.txt");
    const stopped = await runGitSequence(repo.root, [['rev-parse', '--verify', 'no-such-ref'], ['write-tree']]);
    expect(stopped.code).not.toBe(0);
    expect(stopped.stdout).toBe('');
  });
});
