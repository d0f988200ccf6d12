import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeToMain } from './merge-to-main.js';
import type { MergeCheck, MergeOutcome } from './merge-to-main.js';
import { advanceMainNow, createMergeTestSetup, eventRecorder } from '../testing/merge-setup.js';
import type { MergeTestSetup } from '../testing/merge-setup.js';

function landed(outcome: MergeOutcome): Extract<MergeOutcome, { status: 'landed' }> {
  if (outcome.status !== 'landed') throw new Error(`expected landed, got ${JSON.stringify(outcome)}`);
  return outcome;
}

function landedVia(events: ReturnType<typeof eventRecorder>['events']): unknown[] {
  return events.flatMap((event) => (event.type === 'merge.landed' ? [event.data.via] : []));
}

describe('landing in-process', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'src/index.ts': "export * from './app';\n", 'src/app.ts': 'export const app = 1;\n' });
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('replays the agent\'s own commits onto a trunk that moved, keeping their author and message', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    const other = await setup.workspace('w2');
    await temporary.write('docs/one.md', 'one\n', workspace.path);
    await temporary.git(['add', '--all'], workspace.path);
    await temporary.git(['commit', '--quiet', '--author=Agent Smith <agent@example.com>', '-m', 'Write the first doc'], workspace.path);
    await temporary.write('docs/two.md', 'two\n', workspace.path);
    await temporary.write('other.txt', 'other\n', other.path);
    const first = landed(await mergeToMain(repo, other, { message: 'Other change' }));

    const recorder = eventRecorder();
    const outcome = landed(await mergeToMain(repo, workspace, { message: 'Write the second doc', record: recorder.record }));
    expect(landedVia(recorder.events)).toEqual(['in-process']);
    expect(outcome.mainBefore).toBe(first.commit);
    expect(outcome.files).toEqual(['docs/one.md', 'docs/two.md']);
    expect(await temporary.git(['log', '--format=%s|%an|%cn', 'main'])).toBe(
      'Write the second doc|colony|colony\nWrite the first doc|Agent Smith|colony\nOther change|colony|colony\nStart|colony|colony\n',
    );
    // The workspace now is main, files and all, and the repository is sound.
    expect((await temporary.git(['rev-parse', 'HEAD'], workspace.path)).trim()).toBe(outcome.commit);
    expect(await temporary.read('other.txt', workspace.path)).toBe('other\n');
    expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('');
    expect((await temporary.git(['fsck', '--strict', '--no-dangling'])).trim()).toBe('');
  });

  it('merges lines two workspaces appended to the same file without the agent, and records it', async () => {
    const { temporary, repo } = setup;
    const left = await setup.workspace('left');
    const right = await setup.workspace('right');
    await temporary.write('src/index.ts', "export * from './app';\nexport * from './left';\n", left.path);
    await temporary.write('src/index.ts', "export * from './app';\nexport * from './right';\n", right.path);
    landed(await mergeToMain(repo, left, { message: 'Left' }));
    const recorder = eventRecorder();
    const outcome = landed(await mergeToMain(repo, right, { message: 'Right', record: recorder.record }));
    expect(outcome.autoResolved).toEqual(['src/index.ts']);
    expect(landedVia(recorder.events)).toEqual(['in-process']);
    expect(await temporary.git(['show', 'main:src/index.ts'])).toBe("export * from './app';\nexport * from './left';\nexport * from './right';\n");
  });

  it('hands a real conflict to git\'s rebase, which stops with markers for the agent', async () => {
    const { temporary, repo } = setup;
    const left = await setup.workspace('left');
    const right = await setup.workspace('right');
    await temporary.write('src/app.ts', 'export const app = 2;\n', left.path);
    await temporary.write('src/app.ts', 'export const app = 3;\n', right.path);
    landed(await mergeToMain(repo, left, { message: 'Two' }));
    const outcome = await mergeToMain(repo, right, { message: 'Three' });
    expect(outcome).toMatchObject({ status: 'conflicted', files: ['src/app.ts'] });
    expect(await temporary.read('src/app.ts', right.path)).toMatch(/^<<<<<<< /m);
    await temporary.write('src/app.ts', 'export const app = 5;\n', right.path);
    const recorder = eventRecorder();
    landed(await mergeToMain(repo, right, { message: 'unused', record: recorder.record }));
    expect(landedVia(recorder.events)).toEqual(['rebase']);
    expect(await temporary.git(['show', 'main:src/app.ts'])).toBe('export const app = 5;\n');
  });

  it('says there is nothing to merge when the trunk already holds the same change', async () => {
    const { temporary, repo } = setup;
    const left = await setup.workspace('left');
    const right = await setup.workspace('right');
    await temporary.write('same.txt', 'same\n', left.path);
    await temporary.write('same.txt', 'same\n', right.path);
    landed(await mergeToMain(repo, left, { message: 'Same' }));
    expect(await mergeToMain(repo, right, { message: 'Same again' })).toMatchObject({ status: 'nothing-to-merge' });
    expect(await temporary.git(['rev-list', '--count', 'main'])).toBe('2\n');
  });

  describe('with a merge check', () => {
    const failsOnBrokenApp: MergeCheck = async (path) => {
      const { readFile } = await import('node:fs/promises');
      const text = await readFile(join(path, 'src/app.ts'), 'utf8');
      return text.includes('broken') ? { ok: false, error: 'src/app.ts: broken build' } : { ok: true };
    };

    it('lands work that passes, checked on the work replayed onto the trunk', async () => {
      const { temporary, repo } = setup;
      const workspace = await setup.workspace('w1');
      const other = await setup.workspace('w2');
      await temporary.write('theirs.txt', 'theirs\n', other.path);
      landed(await mergeToMain(repo, other, { message: 'Theirs' }));
      await temporary.write('mine.txt', 'mine\n', workspace.path);
      const seen: string[] = [];
      const check: MergeCheck = async (path) => {
        const { readdir } = await import('node:fs/promises');
        seen.push((await readdir(path)).filter((name) => name.endsWith('.txt')).sort().join(','));
        return { ok: true };
      };
      const recorder = eventRecorder();
      landed(await mergeToMain(repo, workspace, { message: 'Mine', check, record: recorder.record }));
      expect(seen).toEqual(['mine.txt,theirs.txt']);
      expect(recorder.events.filter((event) => event.type === 'merge.checked').map((event) => event.data)).toEqual([
        expect.objectContaining({ passed: true }),
      ]);
    });

    it('leaves the trunk alone when the check fails, and the replayed work in the workspace to fix', async () => {
      const { temporary, repo } = setup;
      const workspace = await setup.workspace('w1');
      const other = await setup.workspace('w2');
      await temporary.write('theirs.txt', 'theirs\n', other.path);
      const mainCommit = landed(await mergeToMain(repo, other, { message: 'Theirs' })).commit;
      await temporary.write('src/app.ts', 'export const app = broken;\n', workspace.path);
      const outcome = await mergeToMain(repo, workspace, { message: 'Break it', check: failsOnBrokenApp });
      expect(outcome).toEqual({ status: 'check-failed', output: 'src/app.ts: broken build', mainBefore: mainCommit });
      expect(await setup.mainCommit()).toBe(mainCommit);
      expect(await temporary.read('theirs.txt', workspace.path)).toBe('theirs\n');
      expect(await temporary.git(['status', '--porcelain'], workspace.path)).toBe('');
      await temporary.write('src/app.ts', 'export const app = 4;\n', workspace.path);
      const fixed = landed(await mergeToMain(repo, workspace, { message: 'Fix it', check: failsOnBrokenApp }));
      expect(await temporary.git(['show', `${fixed.commit}:src/app.ts`])).toBe('export const app = 4;\n');
    });

    it('checks again when the trunk moved while the check ran', async () => {
      const { temporary, repo } = setup;
      const workspace = await setup.workspace('w1');
      await temporary.write('mine.txt', 'mine\n', workspace.path);
      let checks = 0;
      const check: MergeCheck = async () => {
        checks += 1;
        if (checks === 1) advanceMainNow(repo);
        return { ok: true };
      };
      const outcome = landed(await mergeToMain(repo, workspace, { message: 'Mine', check }));
      expect(checks).toBe(2);
      expect(outcome.attempts).toBe(2);
    });
  });
});

describe('merging from several processes at once', () => {
  it('lands every change exactly once, with no merge commits, however the compare-and-swaps race', async () => {
    const setup = await createMergeTestSetup({ 'README.md': '# project\n', 'shared.txt': 'start\n' });
    try {
      const racers = ['a', 'b', 'c'].map((name) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'testing', 'merge-racer.ts')], {
          cwd: join(import.meta.dirname, '../../..'),
          env: { ...process.env, REPO: setup.repo.root, RACER: name, WORKSPACES: '4', ROUNDS: '3' },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
        });
        return once(child, 'exit').then(([code]) => ({ code, report: JSON.parse(output) as { landed: string[]; problems: string[]; inProcess: number } }));
      });
      const results = await Promise.all(racers);
      expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
      expect(results.flatMap((result) => result.report.problems)).toEqual([]);
      const changes = results.flatMap((result) => result.report.landed).sort();
      expect(changes).toHaveLength(36);
      // The appends to shared.txt are settled in-process; the rebase path is only for what that cannot do.
      expect(results.reduce((sum, result) => sum + result.report.inProcess, 0)).toBeGreaterThan(18);
      const { temporary } = setup;
      expect(await temporary.git(['rev-list', '--count', '--merges', 'main'])).toBe('0\n');
      expect(await temporary.git(['rev-list', '--count', 'main'])).toBe('37\n');
      const files = (await temporary.git(['ls-tree', '--name-only', 'main', 'out/'])).trim().split('\n');
      expect(files).toEqual(changes.map((change) => `out/${change}.txt`));
      const shared = (await temporary.git(['show', 'main:shared.txt'])).trim().split('\n');
      expect(shared[0]).toBe('start');
      expect(shared.slice(1).sort()).toEqual(changes);
      expect((await temporary.git(['fsck', '--strict', '--no-dangling'])).trim()).toBe('');
    } finally {
      await setup.temporary.remove();
    }
  }, 120_000);
});
