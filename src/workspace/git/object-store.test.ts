import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectId, parseCommit, readableText } from './git-objects.js';
import { createObjectStore } from './object-store.js';
import type { ObjectStore } from './object-store.js';
import { createRefUpdates } from './ref-updates.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

/** Kills the `git update-ref` processes working in `dir` (this test's only), returning how many. */
function killUpdateRefIn(dir: string): number {
  let killed = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('update-ref')) continue;
      process.kill(Number(pid), 'SIGKILL');
      killed += 1;
    } catch {
      // The process ended meanwhile, or is not ours to read.
    }
  }
  return killed;
}

describe('the object store and ref updates, against git itself', () => {
  let temporary: TemporaryRepository;
  let store: ObjectStore;
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'a-b': '1\n', 'a.b': '2\n', 'a/b': '3\n', 'a0': '4\n', 'é.txt': 'accent\n' });
    store = createObjectStore(temporary.root, `${temporary.root}/.git`);
  });
  afterEach(async () => {
    store.close();
    await temporary.remove();
  });

  it('rewrites trees with odd names, symlinks, submodules and the executable bit under the ids git gives them', async () => {
    // A name that is not UTF-8, a symlink, an executable, and a submodule entry, made with git's own plumbing.
    const blob = (await temporary.git(['hash-object', '-w', '--stdin'], temporary.root)).trim();
    const gitDir = `${temporary.root}/.git`;
    const listing = Buffer.concat([
      Buffer.from(`100644 blob ${blob}\tbad`),
      Buffer.from([0xe9]),
      Buffer.from(`name\n120000 blob ${blob}\tlink\n100755 blob ${blob}\trun.sh\n160000 commit ${'1'.repeat(40)}\tvendor\n`),
    ]);
    const odd = execFileSync('git', ['--git-dir', gitDir, 'mktree'], { input: listing, encoding: 'utf8' }).trim();
    const entries = await store.readTree(odd);
    expect(entries.map((entry) => entry.mode).sort()).toEqual(['100644', '100755', '120000', '160000']);
    expect(await store.writeTree([...entries].reverse())).toBe(odd);
    const main = (await temporary.git(['rev-parse', 'main^{tree}'])).trim();
    const mainEntries = await store.readTree(main);
    expect(mainEntries.map((entry) => readableText(entry.name))).toEqual(['README.md', 'a-b', 'a.b', 'a', 'a0', 'é.txt']);
    expect(await store.writeTree([...mainEntries].reverse())).toBe(main);
  });

  it('answers each read with the object asked for, across a reader closed with a read in flight', async () => {
    const head = (await temporary.git(['rev-parse', 'main'])).trim();
    const tree = (await temporary.git(['rev-parse', 'main^{tree}'])).trim();
    const readme = (await temporary.git(['rev-parse', 'main:README.md'])).trim();
    const first = store.read(head);
    store.close();
    await expect(first).rejects.toThrow(/cat-file stopped/);
    expect((await store.read(readme))?.content.toString()).toBe('# project\n');
    const object = await store.read(head);
    expect(object?.type).toBe('commit');
    expect(parseCommit(object?.content ?? Buffer.alloc(0)).tree).toBe(tree);
    expect(await store.read('0'.repeat(40))).toBeNull();
  });

  it('writes objects after git gc removed the folders they go in', async () => {
    const written = await store.write('blob', Buffer.from('first\n'));
    await temporary.git(['gc', '--quiet', '--prune=now']);
    // Same first two hex digits as the object gc packed and whose folder it removed.
    let index = 0;
    while (objectId('blob', Buffer.from(`second ${index}\n`)).slice(0, 2) !== written.slice(0, 2)) index += 1;
    const text = `second ${index}\n`;
    const second = await store.write('blob', Buffer.from(text));
    expect(await temporary.git(['cat-file', '-p', second])).toBe(text);
  });

  it('moves refs by compare-and-swap, refuses a stale expectation, and recovers after its git process is killed', async () => {
    const refs = createRefUpdates(temporary.root, `${temporary.root}/.git`);
    try {
      const head = (await temporary.git(['rev-parse', 'main'])).trim();
      const next = (await temporary.git(['commit-tree', 'main^{tree}', '-p', head, '-m', 'next'])).trim();
      expect(await refs.swap([{ ref: 'refs/heads/main', next, expected: head }])).toEqual({ ok: true });
      expect(await refs.readBranch('main')).toBe(next);
      // The update-ref process is idle now; killed, the next swap must not wait for it.
      const killed = killUpdateRefIn(temporary.root);
      expect(killed).toBe(1);
      const afterKill = await refs.swap([{ ref: 'refs/heads/main', next: head, expected: next }]);
      if (!afterKill.ok) {
        // Asked before its death was noticed: the caller is told to look and try again.
        expect(afterKill).toMatchObject({ unanswered: true });
        expect(await refs.readBranch('main')).toBe(next);
        expect(await refs.swap([{ ref: 'refs/heads/main', next: head, expected: next }])).toEqual({ ok: true });
      }
      expect(await refs.readBranch('main')).toBe(head);
      const stale = await refs.swap([{ ref: 'refs/heads/main', next, expected: next }]);
      expect(stale).toMatchObject({ ok: false, moved: true });
      expect(await refs.readBranch('main')).toBe(head);
      expect(await refs.swap([{ ref: 'refs/heads/main', next, expected: head }])).toEqual({ ok: true });
      expect(await refs.readBranch('no-such-branch')).toBeNull();
    } finally {
      refs.close();
    }
  });
});
