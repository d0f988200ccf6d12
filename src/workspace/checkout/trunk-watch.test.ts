import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { missingWork, putBackFiles, startTrunkWatch, type TrunkLanding, type TrunkWatch } from './trunk-watch.js';

describe('startTrunkWatch', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let watch: TrunkWatch;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/index.js': 'export {};\n' });
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    watch = await startTrunkWatch(repo);
  });
  afterEach(async () => {
    await temporary.remove();
  });

  /** A landing as colony makes one: a commit on a side branch, main moved to it by a reflogged compare-and-swap. */
  async function land(file: string, text: string, index: string): Promise<TrunkLanding> {
    const mainBefore = (await temporary.git(['rev-parse', 'main'])).trim();
    await temporary.git(['switch', '--quiet', '--detach', 'main']);
    await temporary.write(file, text);
    await temporary.write('src/index.js', index);
    const commit = await temporary.commitAll(`Add ${file}`);
    await temporary.git(['switch', '--quiet', 'main']);
    await temporary.git(['update-ref', '-m', 'colony: merge colony/worker-x', 'refs/heads/main', commit, mainBefore]);
    await temporary.git(['reset', '--quiet', '--hard', 'main']);
    const landing = { commit, mainBefore, files: [file, 'src/index.js'] };
    watch.landed(landing);
    return landing;
  }

  it('says nothing of colony\'s own landings, nor of the user\'s commits on top of them', async () => {
    await land('src/a.js', 'a\n', 'a\n');
    await land('src/b.js', 'b\n', 'a\nb\n');
    await temporary.write('NOTES.md', 'mine\n');
    await temporary.commitAll('My notes');
    expect(await watch.check()).toEqual([]);
  });

  it('names a reset that takes landed commits off the trunk, and what is still missing until they come back', async () => {
    await land('src/a.js', 'a\n', 'a\n');
    const second = await land('src/b.js', 'b\n', 'a\nb\n');
    const third = await land('src/c.js', 'c\n', 'a\nb\nc\n');
    await temporary.git(['reset', '--quiet', '--hard', 'HEAD~2']);
    const moved = (await temporary.git(['rev-parse', 'main'])).trim();
    const moves = await watch.check();
    expect(moves).toEqual([{ kind: 'moved', commit: moved, previous: third.commit, action: 'reset: moving to HEAD~2', dropped: [third.commit, second.commit], files: [] }]);
    expect(await watch.check()).toEqual([]);
    expect(await missingWork(repo, moves)).toEqual({ commits: [third.commit, second.commit], files: [] });
    // The same changes back on the trunk in other commits (a later landing replays them) count as back.
    await temporary.git(['cherry-pick', second.commit, third.commit]);
    expect(await missingWork(repo, moves)).toEqual({ commits: [], files: [] });
  });

  it('names an amend of a landed commit', async () => {
    await land('src/a.js', 'a\n', 'a\n');
    const landed = await land('src/b.js', 'b\n', 'a\nb\n');
    await temporary.git(['commit', '--quiet', '--amend', '-m', 'Reworded']);
    const moves = await watch.check();
    expect(moves).toMatchObject([{ kind: 'moved', previous: landed.commit, dropped: [landed.commit] }]);
    expect(moves[0]?.action).toMatch(/^commit \(amend\)/);
  });

  it('names a commit made from an index behind the landings, with the landed files it put back', async () => {
    await land('src/a.js', 'a\n', 'a\n');
    const stale = (await temporary.git(['rev-parse', 'main'])).trim();
    const last = await land('src/b.js', 'b\n', 'a\nb\n');
    // The user's index is still at the first landing: their commit drops src/b.js and the index line.
    await temporary.git(['read-tree', stale]);
    await temporary.write('NOTES.md', 'mine\n');
    await temporary.git(['add', 'NOTES.md']);
    await temporary.git(['commit', '--quiet', '-m', 'My notes']);
    const user = (await temporary.git(['rev-parse', 'main'])).trim();
    const moves = await watch.check();
    expect(moves).toEqual([{ kind: 'reverted', commit: user, previous: last.commit, action: 'commit: My notes', dropped: [last.commit], files: ['src/b.js', 'src/index.js'] }]);
    expect(await missingWork(repo, moves)).toEqual({ commits: [], files: [{ source: last.commit, files: ['src/b.js', 'src/index.js'] }] });
    await temporary.git(['restore', `--source=${last.commit}`, '--staged', '--worktree', '--', 'src/b.js', 'src/index.js']);
    await temporary.git(['commit', '--quiet', '-m', 'Put them back']);
    expect(await missingWork(repo, moves)).toEqual({ commits: [], files: [] });
  });

  it('puts back the files such a commit undid by a commit on top, keeping the user\'s own file, and only what is still undone', async () => {
    await land('src/a.js', 'a\n', 'a\n');
    const stale = (await temporary.git(['rev-parse', 'main'])).trim();
    await land('src/b.js', 'b\n', 'a\nb\n');
    await temporary.git(['read-tree', stale]);
    await temporary.write('NOTES.md', 'mine\n');
    await temporary.git(['add', 'NOTES.md']);
    await temporary.git(['commit', '--quiet', '-m', 'My notes']);
    const user = (await temporary.git(['rev-parse', 'main'])).trim();
    const [move] = await watch.check();
    if (move === undefined) throw new Error('expected the reverting commit to be named');
    const put = await putBackFiles(repo, move, 'Put back what a stale index undid');
    expect(put).toMatch(/^[0-9a-f]{40}$/);
    expect((await temporary.git(['rev-parse', 'main'])).trim()).toBe(put);
    expect((await temporary.git(['rev-parse', `${put ?? ''}^`])).trim()).toBe(user);
    expect((await temporary.git(['ls-tree', '-r', '--name-only', 'main'])).trim().split('\n')).toEqual(['NOTES.md', 'README.md', 'src/a.js', 'src/b.js', 'src/index.js']);
    expect(await temporary.git(['show', 'main:src/index.js'])).toBe('a\nb\n');
    expect(await missingWork(repo, [move])).toEqual({ commits: [], files: [] });
    // colony's own move is not judged again, and nothing is left to put back.
    expect(await watch.check()).toEqual([]);
    expect(await putBackFiles(repo, move, 'again')).toBeNull();
    expect(existsSync(join(repo.gitDir, 'colony-put-back-index'))).toBe(false);
  });

  it('watches from where it started: moves before it and before the first landing are not the run\'s', async () => {
    await temporary.write('early.txt', 'x\n');
    await temporary.commitAll('Early');
    await temporary.git(['reset', '--quiet', '--hard', 'HEAD~1']);
    expect(await watch.check()).toEqual([]);
    const landed = await land('src/a.js', 'a\n', 'a\n');
    const resumed = await startTrunkWatch(repo, [landed]);
    await temporary.git(['reset', '--quiet', '--hard', 'HEAD~1']);
    expect(await resumed.check()).toMatchObject([{ kind: 'moved', dropped: [landed.commit] }]);
    expect(resumed.lastLanded()).toBe(landed.commit);
  });
});
