import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { startTrunkKeeper, type TrunkKeeper } from './trunk-keeper.js';

describe('startTrunkKeeper on the branch checked out', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let recorded: EventBody[];
  let keeper: TrunkKeeper;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/index.js': '\n' });
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    recorded = [];
    keeper = await startTrunkKeeper({ repo, startCommit: (await temporary.git(['rev-parse', 'main'])).trim(), earlier: [], record: (body) => recorded.push(body) });
  });
  afterEach(async () => {
    await temporary.remove();
  });

  /** Moves main to a new commit as a landing does, behind the checkout; returns the landing as `merge.landed` records it. */
  async function landBehind(file: string): Promise<{ commit: string; mainBefore: string; files: string[] }> {
    const mainBefore = (await temporary.git(['rev-parse', 'main'])).trim();
    const index = `${temporary.base}/landing-index`;
    await temporary.git(['read-tree', `--index-output=${index}`, mainBefore]);
    const env = { GIT_INDEX_FILE: index };
    const { runGit } = await import('../../workspace/git/git.js');
    const blob = (await runGit(temporary.root, ['hash-object', '-w', '--stdin'], { input: `${file}\n` })).stdout.trim();
    const indexLine = (await runGit(temporary.root, ['hash-object', '-w', '--stdin'], { input: `${(await temporary.git(['show', `${mainBefore}:src/index.js`]))}${file}\n` })).stdout.trim();
    await runGit(temporary.root, ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { env });
    await runGit(temporary.root, ['update-index', '--cacheinfo', `100644,${indexLine},src/index.js`], { env });
    const tree = (await runGit(temporary.root, ['write-tree'], { env })).stdout.trim();
    const commit = (await runGit(temporary.root, ['commit-tree', tree, '-p', mainBefore, '-m', `Add ${file}`])).stdout.trim();
    await temporary.git(['update-ref', '-m', 'colony: merge colony/worker-x', 'refs/heads/main', commit, mainBefore]);
    return { commit, mainBefore, files: [file, 'src/index.js'] };
  }

  /** The user's `git add NOTES.md && git commit`, from whatever their index holds. */
  async function userCommits(): Promise<string> {
    await temporary.write('NOTES.md', 'mine\n');
    await temporary.git(['add', 'NOTES.md']);
    await temporary.git(['commit', '--quiet', '-m', 'My notes']);
    return (await temporary.git(['rev-parse', 'main'])).trim();
  }

  it('puts back what a commit from an index not yet brought up to a landing undid, and brings the checkout up to it', async () => {
    keeper.landed(await landBehind('src/a.js'));
    await keeper.finish();
    // The next landing moves main, and the user commits before colony brought their index up to it.
    const landing = await landBehind('src/b.js');
    const user = await userCommits();
    keeper.landed(landing);
    const finished = await keeper.finish();
    expect(finished).toEqual({ checkoutProblem: null, trunkProblem: null });
    const rewrites = recorded.filter((body) => body.type === 'trunk.rewritten');
    expect(rewrites).toEqual([
      { type: 'trunk.rewritten', data: expect.objectContaining({ kind: 'reverted', commit: user, dropped: [landing.commit], files: ['src/b.js', 'src/index.js'], restored: expect.stringMatching(/^[0-9a-f]{40}$/) }) },
    ]);
    expect((await temporary.git(['ls-tree', '-r', '--name-only', 'main'])).trim().split('\n')).toEqual(['NOTES.md', 'README.md', 'src/a.js', 'src/b.js', 'src/index.js']);
    expect(await temporary.read('src/index.js')).toBe('\nsrc/a.js\nsrc/b.js\n');
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
  });

  it('only reports undoing a landing the checkout showed: that was the user\'s choice', async () => {
    const landing = await landBehind('src/a.js');
    keeper.landed(landing);
    await keeper.finish();
    await temporary.git(['rm', '--quiet', 'src/a.js']);
    await temporary.write('src/index.js', '\n');
    await temporary.git(['commit', '--quiet', '-am', 'Not this one']);
    const user = (await temporary.git(['rev-parse', 'main'])).trim();
    keeper.landed(await landBehind('src/c.js'));
    const finished = await keeper.finish();
    const rewrites = recorded.filter((body) => body.type === 'trunk.rewritten');
    expect(rewrites).toEqual([{ type: 'trunk.rewritten', data: expect.objectContaining({ kind: 'reverted', commit: user, files: ['src/a.js', 'src/index.js'] }) }]);
    expect(rewrites[0]?.type === 'trunk.rewritten' && rewrites[0].data.restored).toBeUndefined();
    // The next landing changed src/index.js again; src/a.js is still as the user's commit left it.
    expect(finished.trunkProblem).toContain("1 landed file is still as they were before landing after a commit that was not colony's (src/a.js)");
    expect(finished.trunkProblem).toContain(`git restore --source=${landing.commit.slice(0, 12)} --staged --worktree -- src/a.js`);
  });
});
