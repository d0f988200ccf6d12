import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeToMain } from './merge/merge-to-main.js';
import { salvageWorkspace } from './salvage.js';
import { createMergeTestSetup, type MergeTestSetup } from './testing/merge-setup.js';
import { unmergedWork } from './workspace-status.js';

describe('salvageWorkspace', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'notes.md': 'one\n' });
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('commits uncommitted and untracked files onto the workspace’s branch, saying they were salvaged, and keeps it under a salvage ref', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('README.md', '# changed\n', workspace.path);
    await temporary.write('src/new.ts', 'export {};\n', workspace.path);
    const mainCommit = await setup.mainCommit();
    const outcome = await salvageWorkspace(repo, workspace, 'The worker ran out of steps.');
    expect(outcome).toEqual({ ok: true, commit: expect.stringMatching(/^[0-9a-f]{40}$/), files: ['README.md', 'src/new.ts'], branch: 'refs/colony/salvaged/w1', sideBranch: null });
    if (!outcome.ok || outcome.commit === null) throw new Error('expected a commit');
    expect((await temporary.git(['rev-parse', 'colony/w1'])).trim()).toBe(outcome.commit);
    expect((await temporary.git(['rev-parse', 'refs/colony/salvaged/w1'])).trim()).toBe(outcome.commit);
    // Not a branch: the user's branch list does not grow.
    expect(await temporary.git(['branch', '--list', '*salvaged*'])).toBe('');
    expect(await temporary.git(['log', '-1', '--format=%B', 'colony/w1'])).toMatch(/^colony salvaged the uncommitted work of workspace w1\n\nThe worker ran out of steps\.\n\nFiles: README\.md, src\/new\.ts/);
    expect(await setup.mainCommit()).toBe(mainCommit);
    expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: [], unmergedCommits: 1 });
  });

  it('commits nothing when only commits are unlanded; the branch holds them already', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('feature.txt', 'x\n', workspace.path);
    const commit = await temporary.commitAll('Feature', workspace.path);
    expect(await salvageWorkspace(repo, workspace, 'unlanded')).toEqual({ ok: true, commit: null, files: [], branch: 'refs/colony/salvaged/w1', sideBranch: null });
    expect((await temporary.git(['rev-parse', 'refs/colony/salvaged/w1'])).trim()).toBe(commit);
  });

  it('gives work on a detached HEAD a salvage ref of its own, so removing the workspace loses nothing', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.git(['switch', '--quiet', '--detach'], workspace.path);
    await temporary.write('detached.txt', 'x\n', workspace.path);
    const outcome = await salvageWorkspace(repo, workspace, 'unlanded');
    expect(outcome).toMatchObject({ ok: true, files: ['detached.txt'], sideBranch: 'refs/colony/salvaged/w1-salvaged' });
    expect(await temporary.git(['show', 'refs/colony/salvaged/w1-salvaged:detached.txt'])).toBe('x\n');
    expect((await temporary.git(['rev-parse', 'colony/w1'])).trim()).toBe(await setup.mainCommit());
  });

  it('saves a conflict resolution in progress on a side branch; the branch keeps the commits as they were', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    const other = await setup.workspace('w2');
    await temporary.write('notes.md', 'two\n', other.path);
    expect(await mergeToMain(repo, other, { message: 'Two' })).toMatchObject({ status: 'landed' });
    await temporary.write('notes.md', 'three\n', workspace.path);
    const conflicted = await mergeToMain(repo, workspace, { message: 'Three' });
    expect(conflicted).toMatchObject({ status: 'conflicted', files: ['notes.md'] });
    const original = (await temporary.git(['rev-parse', 'colony/w1'])).trim();
    await temporary.write('notes.md', 'two and three\n', workspace.path);
    const outcome = await salvageWorkspace(repo, workspace, 'stopped mid-rebase');
    expect(outcome).toMatchObject({ ok: true, files: ['notes.md'], branch: 'refs/colony/salvaged/w1', sideBranch: 'refs/colony/salvaged/w1-salvaged' });
    expect(await temporary.git(['show', 'refs/colony/salvaged/w1-salvaged:notes.md'])).toBe('two and three\n');
    expect(await temporary.git(['log', '-1', '--format=%B', 'refs/colony/salvaged/w1-salvaged'])).toContain('A rebase onto main was stopped at a conflict');
    expect((await temporary.git(['rev-parse', 'refs/colony/salvaged/w1'])).trim()).toBe(original);
  });
});
