import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { landBranch } from './land-branch.js';

describe('landBranch', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'shared.txt': 'one\n' });
    // The merge is the user's own: their git, their name.
    await temporary.git(['config', 'user.name', 'The User']);
    await temporary.git(['config', 'user.email', 'user@example.invalid']);
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    await temporary.git(['switch', '--quiet', '-c', 'colony/goal']);
    await temporary.write('src/a.js', 'export const a = 1;\n');
    await temporary.commitAll('Add a');
    await temporary.write('src/b.js', 'export const b = 2;\n');
    await temporary.commitAll('Add b');
    await temporary.git(['switch', '--quiet', 'main']);
  });
  afterEach(async () => {
    await temporary.remove();
  });

  const log = async (branch: string) => (await temporary.git(['log', '--format=%s', branch])).trim().split('\n');

  it('fast-forwards the branch checked out when it has not moved, files and all', async () => {
    const landed = await landBranch(repo, 'colony/goal', 'main');
    const tip = (await temporary.git(['rev-parse', 'colony/goal'])).trim();
    expect(landed).toEqual({ ok: true, how: 'fast-forward', into: 'main', commit: tip, commits: 2 });
    expect(await temporary.read('src/b.js')).toBe('export const b = 2;\n');
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    expect(await landBranch(repo, 'colony/goal', 'main')).toMatchObject({ ok: true, how: 'up-to-date', commits: 0 });
  });

  it('merges in the user\'s name when both moved, keeping the user\'s commits', async () => {
    await temporary.write('NOTES.md', 'mine\n');
    await temporary.commitAll('My notes');
    const landed = await landBranch(repo, 'colony/goal', 'main');
    expect(landed).toMatchObject({ ok: true, how: 'merge', into: 'main', commits: 2 });
    expect((await temporary.git(['log', '--first-parent', '--format=%s', 'main'])).trim().split('\n')).toEqual(['Merge colony/goal: the work of a colony run', 'My notes', 'Start']);
    expect(await temporary.git(['merge-base', '--is-ancestor', 'colony/goal', 'main'])).toBe('');
    expect((await temporary.git(['log', '-1', '--format=%an'])).trim()).toBe('The User');
    expect(await temporary.read('NOTES.md')).toBe('mine\n');
    expect(await temporary.read('src/a.js')).toBe('export const a = 1;\n');
  });

  it('takes a conflicting merge back whole and names the files', async () => {
    await temporary.git(['switch', '--quiet', 'colony/goal']);
    await temporary.write('shared.txt', 'theirs\n');
    await temporary.commitAll('Change shared on the run branch');
    await temporary.git(['switch', '--quiet', 'main']);
    await temporary.write('shared.txt', 'mine\n');
    const before = await temporary.commitAll('Change shared on main');
    const refused = await landBranch(repo, 'colony/goal', 'main');
    expect(refused).toEqual({ ok: false, error: expect.stringContaining('both changed shared.txt, so they do not merge cleanly; nothing was changed') });
    expect((await temporary.git(['rev-parse', 'HEAD'])).trim()).toBe(before);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
    expect(await temporary.read('shared.txt')).toBe('mine\n');
  });

  it('stops before anything moves when the user\'s own edits are in the way', async () => {
    await temporary.write('src/a.js', 'my own a\n');
    const refused = await landBranch(repo, 'colony/goal', 'main');
    expect(refused).toEqual({ ok: false, error: expect.stringContaining('so nothing was changed') });
    expect(await temporary.read('src/a.js')).toBe('my own a\n');
    expect(await log('main')).toEqual(['Start']);
  });

  it('refuses a branch that is not checked out, or one that is gone', async () => {
    expect(await landBranch(repo, 'colony/goal', 'release')).toEqual({ ok: false, error: expect.stringContaining('release is not checked out there') });
    expect(await landBranch(repo, 'colony/gone', 'main')).toEqual({ ok: false, error: expect.stringContaining('there is no branch colony/gone') });
  });
});
