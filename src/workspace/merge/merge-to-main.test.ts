import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventBodySchema } from '../../events/event-types.js';
import { runGit } from '../git/git.js';
import { mergeToMain } from './merge-to-main.js';
import type { MergeOutcome } from './merge-to-main.js';
import { advanceMainNow, createMergeTestSetup, eventRecorder } from '../testing/merge-setup.js';
import type { MergeTestSetup } from '../testing/merge-setup.js';

function landed(outcome: MergeOutcome): Extract<MergeOutcome, { status: 'landed' }> {
  if (outcome.status !== 'landed') throw new Error(`expected landed, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('mergeToMain', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'src/app.ts': 'export const app = 1;\n' });
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('commits pending changes, moves the trunk and reports the files and events', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    const base = await setup.mainCommit();
    await temporary.write('src/app.ts', 'export const app = 2;\n', workspace.path);
    await temporary.write('src/new.ts', 'export const added = true;\n', workspace.path);
    const recorder = eventRecorder();
    // Started, queued for main's turn, given it, landed.
    const clock = [1_000, 1_100, 1_100, 1_250];
    const outcome = landed(
      await mergeToMain(repo, workspace, { message: 'Change the app\n\nAnd add a module.', record: recorder.record, now: () => clock.shift() ?? 0 }),
    );
    expect(outcome).toEqual({ status: 'landed', commit: expect.stringMatching(/^[0-9a-f]{40}$/), mainBefore: base, attempts: 1, files: ['src/app.ts', 'src/new.ts'], autoResolved: [], waitMs: 0 });
    expect(await setup.mainCommit()).toBe(outcome.commit);
    expect((await temporary.git(['rev-parse', `${outcome.commit}^`])).trim()).toBe(base);
    expect(await temporary.git(['log', '-1', '--format=%B', outcome.commit])).toBe('Change the app\n\nAnd add a module.\n');
    expect((await temporary.git(['rev-parse', 'HEAD'], workspace.path)).trim()).toBe(outcome.commit);
    expect(recorder.events.map((event) => eventBodySchema.parse(event))).toEqual([
      { type: 'merge.attempted', data: { branch: 'colony/w1', mainBefore: base, attempt: 1 } },
      { type: 'merge.landed', data: { commit: outcome.commit, mainBefore: base, attempts: 1, files: ['src/app.ts', 'src/new.ts'], durationMs: 250, autoResolved: [], waitMs: 0, via: 'in-process' } },
    ]);
  });

  it('lands commits the agent made itself, and deletions', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('docs.md', 'notes\n', workspace.path);
    await temporary.commitAll('Add notes', workspace.path);
    await temporary.git(['rm', '--quiet', 'README.md'], workspace.path);
    const outcome = landed(await mergeToMain(repo, workspace, { message: 'Remove the readme' }));
    expect(outcome.files).toEqual(['README.md', 'docs.md']);
    expect(await temporary.git(['log', '--format=%s', 'main'])).toBe('Remove the readme\nAdd notes\nStart\n');
  });

  it('says there is nothing to merge for an untouched workspace, and emits nothing', async () => {
    const workspace = await setup.workspace('idle');
    const recorder = eventRecorder();
    const outcome = await mergeToMain(setup.repo, workspace, { message: 'unused', record: recorder.record });
    expect(outcome).toEqual({ status: 'nothing-to-merge', reason: expect.stringMatching(/no changes beyond main/) });
    expect(recorder.events).toEqual([]);
  });

  it('fails with what to do when the workspace left its branch', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.git(['switch', '--quiet', '--detach'], workspace.path);
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    const outcome = await mergeToMain(repo, workspace, { message: 'Mine' });
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/not on its branch colony\/w1.*git switch colony\/w1/) });
    expect(await temporary.git(['rev-list', '--count', 'main'])).toBe('1\n');
  });

  it('reports a trunk that no longer exists as a failure, not an exception', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    await temporary.git(['update-ref', '-d', 'refs/heads/main']);
    const outcome = await mergeToMain(repo, workspace, { message: 'Mine' });
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/main/) });
  });

  it('lets the agent keep working in the workspace and merge again', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('one.txt', '1\n', workspace.path);
    const first = landed(await mergeToMain(repo, workspace, { message: 'One' }));
    expect(await mergeToMain(repo, workspace, { message: 'nothing new' })).toMatchObject({ status: 'nothing-to-merge' });
    await temporary.write('two.txt', '2\n', workspace.path);
    const second = landed(await mergeToMain(repo, workspace, { message: 'Two' }));
    expect(second.mainBefore).toBe(first.commit);
    expect(second.files).toEqual(['two.txt']);
  });

  it('lands every one of many concurrent merges in this process, none starved, with two attempts each at most', async () => {
    const { temporary, repo } = setup;
    const workspaces = await Promise.all(Array.from({ length: 8 }, (_, index) => setup.workspace(`m${index}`)));
    await Promise.all(workspaces.map((workspace, index) => temporary.write(`file-${index}.txt`, `${index}\n`, workspace.path)));
    const outcomes = await Promise.all(workspaces.map((workspace, index) => mergeToMain(repo, workspace, { message: `File ${index}`, maxAttempts: 2 })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array.from({ length: 8 }, () => 'landed'));
    expect((await temporary.git(['rev-list', '--count', 'main'])).trim()).toBe('9');
    expect((await temporary.git(['ls-tree', '--name-only', 'main'])).split('\n').filter((name) => name.startsWith('file-'))).toHaveLength(8);
  });

  it('retries when the trunk moves between reading and swapping it', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    const base = await setup.mainCommit();
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    let interloper = '';
    const recorder = eventRecorder();
    const outcome = landed(
      await mergeToMain(repo, workspace, {
        message: 'Mine',
        record: (event) => {
          recorder.record(event);
          if (event.type === 'merge.attempted' && event.data.attempt === 1) interloper = advanceMainNow(repo);
        },
      }),
    );
    expect(outcome).toMatchObject({ attempts: 2, mainBefore: interloper, files: ['mine.txt'] });
    expect((await temporary.git(['rev-parse', `${outcome.commit}^`])).trim()).toBe(interloper);
    expect(recorder.events.map((event) => event.type)).toEqual(['merge.attempted', 'merge.attempted', 'merge.landed']);
    expect(recorder.events[0]).toEqual({ type: 'merge.attempted', data: { branch: 'colony/w1', mainBefore: base, attempt: 1 } });
    expect(recorder.events[1]).toEqual({ type: 'merge.attempted', data: { branch: 'colony/w1', mainBefore: interloper, attempt: 2 } });
  });

  it('fails after maxAttempts races lost in a row, leaving the work committed on the branch', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    const outcome = await mergeToMain(repo, workspace, {
      message: 'Mine',
      maxAttempts: 3,
      record: (event) => {
        if (event.type === 'merge.attempted') advanceMainNow(repo);
      },
    });
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/main moved 3 times/) });
    expect(await temporary.git(['log', '--format=%s', '-1', 'colony/w1'])).toBe('Mine\n');
    expect(landed(await mergeToMain(repo, workspace, { message: 'unused' })).files).toEqual(['mine.txt']);
  });

  it('lands two workspaces merging at the same moment, one after the other', async () => {
    const { temporary, repo } = setup;
    const base = await setup.mainCommit();
    const left = await setup.workspace('left');
    const right = await setup.workspace('right');
    await temporary.write('left.txt', 'left\n', left.path);
    await temporary.write('right.txt', 'right\n', right.path);
    const outcomes = (await Promise.all([mergeToMain(repo, left, { message: 'Left' }), mergeToMain(repo, right, { message: 'Right' })])).map(landed);
    const [first, second] = [...outcomes].sort((a, b) => (a.mainBefore === base ? -1 : b.mainBefore === base ? 1 : 0));
    if (first === undefined || second === undefined) throw new Error('expected two outcomes');
    // The second one had to be rebased onto (or retried against) the first one's commit.
    expect(first.mainBefore).toBe(base);
    expect(second.mainBefore).toBe(first.commit);
    expect(await setup.mainCommit()).toBe(second.commit);
    expect(await temporary.git(['rev-list', '--count', '--merges', 'main'])).toBe('0\n');
    expect(await temporary.git(['rev-list', '--count', 'main'])).toBe('3\n');
    expect(await temporary.git(['ls-tree', '--name-only', 'main'])).toBe('README.md\nleft.txt\nright.txt\nsrc\n');
  });

  it('lands eight concurrent merges without losing a commit', async () => {
    const { temporary, repo } = setup;
    const ids = Array.from({ length: 8 }, (_, index) => `agent-${index}`);
    const workspaces = await Promise.all(ids.map((id) => setup.workspace(id)));
    const outcomes = await Promise.all(
      workspaces.map(async (workspace) => {
        await temporary.write(`out/${workspace.id}.txt`, `${workspace.id}\n`, workspace.path);
        return landed(await mergeToMain(repo, workspace, { message: `Add ${workspace.id}` }));
      }),
    );
    expect(await temporary.git(['rev-list', '--count', 'main'])).toBe('9\n');
    expect(await temporary.git(['rev-list', '--count', '--merges', 'main'])).toBe('0\n');
    const subjects = (await temporary.git(['log', '--format=%s', 'main'])).trim().split('\n');
    expect(subjects.sort()).toEqual([...ids.map((id) => `Add ${id}`), 'Start'].sort());
    for (const outcome of outcomes) {
      expect((await runGit(repo.root, ['merge-base', '--is-ancestor', outcome.commit, 'main'])).code).toBe(0);
    }
    expect(new Set(outcomes.map((outcome) => outcome.mainBefore)).size).toBe(8);
    expect(await temporary.git(['ls-tree', '--name-only', 'main', 'out/'])).toBe(ids.map((id) => `out/${id}.txt\n`).sort().join(''));
  });
});
