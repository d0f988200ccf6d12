import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeRepositoryObjects } from '../git/repository-objects.js';
import { createMergeTestSetup, type MergeTestSetup } from '../testing/merge-setup.js';
import { changedTestsOutside, isTestFile } from './others-tests.js';

describe('isTestFile', () => {
  it("knows the usual runners' test files", () => {
    for (const path of ['src/pad.test.js', 'src/Pad.spec.ts', 'pkg/pad_test.go', 'tests/test_pad.py', 'test/pad.js', 'src/__tests__/pad.tsx', 'spec/pad_spec.rb']) {
      expect(isTestFile(path), path).toBe(true);
    }
  });

  it('leaves the code alone, however its name reads', () => {
    for (const path of ['src/pad.js', 'src/testing.js', 'src/contest.js', 'docs/test-plan.md', 'src/latest/pad.js', 'test.js']) {
      expect(isTestFile(path), path).toBe(false);
    }
  });
});

describe('changedTestsOutside', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({
      'src/pad.js': 'export const pad = 1;\n',
      'src/pad.test.js': "test('pad', () => {});\n",
      'src/trim.js': 'export const trim = 1;\n',
      'src/trim.test.js': "test('trim', () => {});\n",
      'test/index.test.js': "test('index', () => {});\n",
    });
  });
  afterEach(async () => {
    await closeRepositoryObjects(setup.repo);
    await setup.temporary.remove();
  });

  const ownsPad = (path: string): boolean => path.startsWith('src/pad');

  it('lists the tests main has that the work changes or deletes outside its paths, committed or not', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('src/pad.js', 'export const pad = 2;\n', workspace.path);
    await temporary.write('src/pad.test.js', "test('pad, changed', () => {});\n", workspace.path);
    await temporary.write('src/trim.test.js', "test.skip('trim', () => {});\n", workspace.path);
    await rm(join(workspace.path, 'test/index.test.js'));
    await temporary.write('src/wrap.test.js', "test('new', () => {});\n", workspace.path);
    expect(await changedTestsOutside(repo, workspace, ownsPad)).toEqual(['src/trim.test.js', 'test/index.test.js']);

    await temporary.commitAll('Work, and two tests that are not its own', workspace.path);
    expect(await changedTestsOutside(repo, workspace, ownsPad)).toEqual(['src/trim.test.js', 'test/index.test.js']);
  });

  it("counts only the workspace's own change, not what main did since it started", async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w2');
    await temporary.write('src/trim.test.js', "test('trim, by another task', () => {});\n");
    await temporary.commitAll('Another task changes the trim test on main');
    await temporary.write('src/pad.test.js', "test('pad, changed', () => {});\n", workspace.path);
    expect(await changedTestsOutside(repo, workspace, ownsPad)).toEqual([]);

    await temporary.write('src/trim.test.js', "test.skip('trim', () => {});\n", workspace.path);
    expect(await changedTestsOutside(repo, workspace, ownsPad)).toEqual(['src/trim.test.js']);
  });
});
