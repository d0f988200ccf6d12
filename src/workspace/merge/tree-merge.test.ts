import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCommit, serializeCommit } from '../git/git-objects.js';
import { createObjectStore } from '../git/object-store.js';
import type { ObjectStore } from '../git/object-store.js';
import { changedPaths, mergeTrees } from './tree-merge.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

describe('objects and tree merges in-process', () => {
  let temporary: TemporaryRepository;
  let store: ObjectStore;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({
      'README.md': '# project\n',
      'src/app.ts': 'export const app = 1;\n',
      'src/index.ts': "export * from './app';\n",
      'docs/guide.md': 'Guide\n',
    });
    store = createObjectStore(temporary.root, `${temporary.root}/.git`);
  });
  afterEach(async () => {
    store.close();
    await temporary.remove();
  });

  /** The tree of the commit made after `change` runs on a branch from `from`. */
  async function treeAfter(from: string, change: () => Promise<void>): Promise<string> {
    await temporary.git(['switch', '--quiet', '--force', '--detach', from]);
    await temporary.git(['clean', '--quiet', '-d', '--force']);
    await change();
    await temporary.git(['add', '--all']);
    return (await temporary.git(['write-tree'])).trim();
  }

  async function baseTree(): Promise<string> {
    return (await temporary.git(['rev-parse', 'main^{tree}'])).trim();
  }

  it('writes trees and commits that git reads back byte for byte, under the ids git gives them', async () => {
    const tree = await baseTree();
    const entries = await store.readTree(tree);
    expect(entries.map((entry) => entry.name)).toEqual(['README.md', 'docs', 'src']);
    // Shuffled on purpose: the store must put entries in git's order, or the id would differ.
    expect(await store.writeTree([...entries].reverse())).toBe(tree);
    const head = (await temporary.git(['rev-parse', 'main'])).trim();
    const original = await store.read(head);
    if (original === null) throw new Error('missing head commit');
    const commit = parseCommit(original.content);
    const copy = await store.write('commit', serializeCommit({ ...commit, message: 'A copy\n' }));
    expect(await temporary.git(['log', '-1', '--format=%T %an %s', copy])).toBe(`${tree} ${commit.author.split(' <')[0]} A copy\n`);
    await temporary.git(['update-ref', 'refs/heads/copy', copy]);
    expect((await temporary.git(['fsck', '--strict', '--no-dangling'])).trim()).toBe('');
  });

  it('merges changes to different files', async () => {
    const base = await baseTree();
    const ours = await treeAfter('main', () => temporary.write('src/app.ts', 'export const app = 2;\n'));
    const theirs = await treeAfter('main', () => temporary.write('docs/new.md', 'New\n'));
    const merged = await mergeTrees(store, base, ours, theirs);
    if (!merged.ok) throw new Error(`conflict at ${merged.conflict}`);
    expect(merged.autoResolved).toEqual([]);
    expect(await changedPaths(store, base, merged.tree)).toEqual(['docs/new.md', 'src/app.ts']);
    expect(await temporary.git(['show', `${merged.tree}:src/app.ts`])).toBe('export const app = 2;\n');
  });

  it('keeps an identical change once and merges lines both sides appended', async () => {
    const base = await baseTree();
    const ours = await treeAfter('main', async () => {
      await temporary.write('README.md', '# project\nmore\n');
      await temporary.write('src/index.ts', "export * from './app';\nexport * from './ours';\n");
    });
    const theirs = await treeAfter('main', async () => {
      await temporary.write('README.md', '# project\nmore\n');
      await temporary.write('src/index.ts', "export * from './app';\nexport * from './theirs';\n");
    });
    const merged = await mergeTrees(store, base, ours, theirs);
    if (!merged.ok) throw new Error(`conflict at ${merged.conflict}`);
    expect(merged.autoResolved).toEqual(['src/index.ts']);
    expect(await temporary.git(['show', `${merged.tree}:src/index.ts`])).toBe("export * from './app';\nexport * from './ours';\nexport * from './theirs';\n");
    expect(await temporary.git(['show', `${merged.tree}:README.md`])).toBe('# project\nmore\n');
  });

  it('reports a conflict for the same line changed two ways, a delete against an edit, and a file against a folder', async () => {
    const base = await baseTree();
    const editedOne = await treeAfter('main', () => temporary.write('src/app.ts', 'export const app = 2;\n'));
    const editedTwo = await treeAfter('main', () => temporary.write('src/app.ts', 'export const app = 3;\n'));
    expect(await mergeTrees(store, base, editedOne, editedTwo)).toEqual({ ok: false, error: 'src/app.ts changed on both sides in ways a tree merge cannot settle', conflict: 'src/app.ts' });

    const deleted = await treeAfter('main', () => temporary.git(['rm', '--quiet', 'src/app.ts']).then(() => undefined));
    expect(await mergeTrees(store, base, editedOne, deleted)).toEqual({ ok: false, error: 'src/app.ts changed on both sides in ways a tree merge cannot settle', conflict: 'src/app.ts' });

    const folder = await treeAfter('main', async () => {
      await temporary.git(['rm', '--quiet', 'docs/guide.md']);
      await temporary.write('docs/guide.md/part.md', 'Part\n');
    });
    const edited = await treeAfter('main', () => temporary.write('docs/guide.md', 'Guide, edited\n'));
    expect(await mergeTrees(store, base, edited, folder)).toEqual({ ok: false, error: 'docs/guide.md changed on both sides in ways a tree merge cannot settle', conflict: 'docs/guide.md' });
  });

  it('keeps one side\'s deletion next to the other\'s addition, and drops the folder it emptied', async () => {
    const base = await baseTree();
    const ours = await treeAfter('main', () => temporary.git(['rm', '--quiet', 'docs/guide.md']).then(() => undefined));
    const theirs = await treeAfter('main', () => temporary.write('src/more.ts', 'export {};\n'));
    const merged = await mergeTrees(store, base, ours, theirs);
    if (!merged.ok) throw new Error(`conflict at ${merged.conflict}`);
    expect(await temporary.git(['ls-tree', '-r', '--name-only', merged.tree])).toBe('README.md\nsrc/app.ts\nsrc/index.ts\nsrc/more.ts\n');
  });
});
