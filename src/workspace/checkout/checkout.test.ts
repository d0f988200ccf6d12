import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateCheckout } from './checkout.js';
import { mergeToMain } from '../merge/merge-to-main.js';
import { createMergeTestSetup } from '../testing/merge-setup.js';
import type { MergeTestSetup } from '../testing/merge-setup.js';

describe('updateCheckout', () => {
  let setup: MergeTestSetup;
  let fromCommit: string;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'src/app.ts': 'export const app = 1;\n', 'old.txt': 'old\n' });
    fromCommit = await setup.mainCommit();
    // Colony lands work on main while the user's checkout still shows fromCommit.
    const workspace = await setup.workspace('w1');
    await setup.temporary.write('src/app.ts', 'export const app = 2;\n', workspace.path);
    await setup.temporary.write('src/added.ts', 'export const added = true;\n', workspace.path);
    await setup.temporary.git(['rm', '--quiet', 'old.txt'], workspace.path);
    const outcome = await mergeToMain(setup.repo, workspace, { message: 'Colony work' });
    expect(outcome.status).toBe('landed');
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('brings the files and the index of the main checkout to the new trunk', async () => {
    const { temporary, repo } = setup;
    expect(await temporary.read('src/app.ts')).toBe('export const app = 1;\n');
    const result = await updateCheckout(repo, fromCommit);
    expect(result).toEqual({ ok: true, commit: await setup.mainCommit() });
    expect(await temporary.read('src/app.ts')).toBe('export const app = 2;\n');
    expect(await temporary.read('src/added.ts')).toBe('export const added = true;\n');
    await expect(temporary.read('old.txt')).rejects.toThrow(/ENOENT/);
    expect(await temporary.git(['status', '--porcelain'])).toBe('');
  });

  it('does nothing when the trunk has not moved', async () => {
    const mainCommit = await setup.mainCommit();
    await updateCheckout(setup.repo, fromCommit);
    expect(await updateCheckout(setup.repo, mainCommit)).toEqual({ ok: true, commit: mainCommit });
    expect(await setup.temporary.git(['status', '--porcelain'])).toBe('');
  });

  it('carries the user’s edits to files the update does not touch', async () => {
    const { temporary, repo } = setup;
    await temporary.write('README.md', '# project, edited by the user\n');
    await temporary.write('scratch.txt', 'untracked\n');
    const result = await updateCheckout(repo, fromCommit);
    expect(result.ok).toBe(true);
    expect(await temporary.read('src/app.ts')).toBe('export const app = 2;\n');
    expect(await temporary.read('README.md')).toBe('# project, edited by the user\n');
    expect(await temporary.git(['status', '--porcelain'])).toBe(' M README.md\n?? scratch.txt\n');
  });

  it('refuses, naming every file, when the user edited files the update changes, and touches nothing', async () => {
    const { temporary, repo } = setup;
    await temporary.write('src/app.ts', 'export const app = "mine";\n');
    await temporary.write('src/added.ts', 'my own untracked file\n');
    await temporary.write('README.md', '# edited too\n');
    const indexBefore = await temporary.git(['ls-files', '--stage']);
    const result = await updateCheckout(repo, fromCommit);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/local changes to files the update would overwrite: src\/added\.ts, src\/app\.ts\./);
      expect(result.error).toMatch(/Nothing was changed/);
      expect(result.error).toContain(`git restore --source=${fromCommit}`);
    }
    expect(await temporary.read('src/app.ts')).toBe('export const app = "mine";\n');
    expect(await temporary.read('src/added.ts')).toBe('my own untracked file\n');
    expect(await temporary.read('README.md')).toBe('# edited too\n');
    expect(await temporary.read('old.txt')).toBe('old\n');
    expect(await temporary.git(['ls-files', '--stage'])).toBe(indexBefore);
  });

  it('refuses when the user staged a change to a file the update changes', async () => {
    const { temporary, repo } = setup;
    await temporary.write('old.txt', 'staged by the user\n');
    await temporary.git(['add', 'old.txt']);
    const result = await updateCheckout(repo, fromCommit);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/would overwrite: old\.txt\./) });
    expect(await temporary.read('old.txt')).toBe('staged by the user\n');
  });

  it('reports a trunk that no longer exists as an error', async () => {
    await setup.temporary.git(['update-ref', '-d', 'refs/heads/main']);
    const result = await updateCheckout(setup.repo, fromCommit);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/branch main does not exist/) });
  });

  it('refuses when the user switched to another branch', async () => {
    const { temporary, repo } = setup;
    await temporary.git(['switch', '--quiet', '-c', 'elsewhere']);
    const result = await updateCheckout(repo, fromCommit);
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/no longer has main checked out/) });
    expect(await temporary.read('src/app.ts')).toBe('export const app = 1;\n');
  });
});
