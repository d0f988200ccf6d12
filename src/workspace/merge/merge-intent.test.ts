import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGit } from '../git/git.js';
import { settleInterruptedMerge } from './interrupted-merge.js';
import { mergeToMain } from './merge-to-main.js';
import type { MergeIntent, MergeOutcome } from './merge-to-main.js';
import { closeRepositoryObjects } from '../git/repository-objects.js';
import type { Repository } from '../git/repository.js';
import { advanceMainNow, createMergeTestSetup, eventRecorder } from '../testing/merge-setup.js';
import type { MergeTestSetup } from '../testing/merge-setup.js';
import type { Workspace } from '../workspace.js';

const CONFIG = 'export const config = {\n  name: "colony",\n  retries: 3,\n};\n';

function landed(outcome: MergeOutcome): Extract<MergeOutcome, { status: 'landed' }> {
  if (outcome.status !== 'landed') throw new Error(`expected landed, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** Reads a ref inside an `onIntent` callback: within main's turn, before the swap. */
function commitNow(gitDir: string, ref: string): string {
  return execFileSync('git', ['--git-dir', gitDir, 'rev-parse', ref], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }).trim();
}

/**
 * The two ways a merge lands: in-process, and through git's rebase, which a conflict the agent
 * resolved forces (`prepare` leaves the workspace there, its resolution written, not yet merged).
 */
const paths: { readonly via: 'in-process' | 'rebase'; prepare(setup: MergeTestSetup, workspace: Workspace): Promise<void> }[] = [
  {
    via: 'in-process',
    async prepare(setup, workspace) {
      await setup.temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), workspace.path);
    },
  },
  {
    via: 'rebase',
    async prepare(setup, workspace) {
      const { temporary, repo } = setup;
      const other = await setup.workspace(`${workspace.id}-other`);
      await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 5'), other.path);
      landed(await mergeToMain(repo, other, { message: 'Five retries' }));
      await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), workspace.path);
      expect(await mergeToMain(repo, workspace, { message: 'Seven retries' })).toMatchObject({ status: 'conflicted' });
      await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 6'), workspace.path);
    },
  },
];

/** The patch id of every commit on main that changes something: a duplicated patch shows up twice. */
async function mainPatchIds(setup: MergeTestSetup): Promise<string[]> {
  const log = await setup.temporary.git(['log', '-p', '--no-ext-diff', '--no-textconv', setup.repo.mainBranch]);
  const ids = await runGit(setup.repo.root, ['patch-id', '--stable'], { input: log });
  return ids.stdout.trim().split('\n').map((line) => line.split(' ')[0] ?? '');
}

describe.each(paths)('merge intents, landing $via', ({ via, prepare }) => {
  let setup: MergeTestSetup;
  let repo: Repository;
  let workspace: Workspace;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'config.ts': CONFIG });
    repo = setup.repo;
    workspace = await setup.workspace('w1');
    await prepare(setup, workspace);
  });
  afterEach(async () => {
    await closeRepositoryObjects(repo);
    await setup.temporary.remove();
  });

  it('announces the swap before the trunk moves, with the commit it is about to land', async () => {
    const mainBefore = await setup.mainCommit();
    const intents: MergeIntent[] = [];
    const mainAtIntent: string[] = [];
    const recorder = eventRecorder();
    const outcome = landed(
      await mergeToMain(repo, workspace, {
        message: 'Seven retries',
        record: recorder.record,
        onIntent: (intent) => {
          intents.push(intent);
          mainAtIntent.push(commitNow(repo.gitDir, `refs/heads/${repo.mainBranch}`));
        },
      }),
    );
    expect(recorder.events.find((event) => event.type === 'merge.landed')?.data).toMatchObject({ via });
    expect(intents).toEqual([{ commit: outcome.commit, mainBefore, branch: 'colony/w1' }]);
    expect(mainAtIntent).toEqual([mainBefore]);
  });

  it('announces every swap it attempts, and only the last one lands', async () => {
    const intents: MergeIntent[] = [];
    const outcome = landed(
      await mergeToMain(repo, workspace, {
        message: 'Seven retries',
        onIntent: (intent) => {
          intents.push(intent);
          // Another process lands between the announcement and the swap, which then fails.
          if (intents.length === 1) advanceMainNow(repo);
        },
      }),
    );
    expect(intents).toHaveLength(2);
    const [lost, won] = intents;
    if (lost === undefined || won === undefined) throw new Error('two intents expected');
    expect(won).toEqual({ commit: outcome.commit, mainBefore: outcome.mainBefore, branch: 'colony/w1' });
    expect(won.mainBefore).not.toBe(lost.mainBefore);
    expect(await settleInterruptedMerge(repo, [lost])).toEqual({ landed: false });
    expect(await settleInterruptedMerge(repo, intents)).toEqual({ landed: true, commit: outcome.commit, files: ['config.ts'] });
  });

  it('leaves the trunk alone when the intent cannot be recorded, and lands when called again', async () => {
    const mainBefore = await setup.mainCommit();
    const recorder = eventRecorder();
    const outcome = await mergeToMain(repo, workspace, {
      message: 'Seven retries',
      record: recorder.record,
      onIntent: () => {
        throw new Error('disk full');
      },
    });
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/could not record the merge of colony\/w1 before landing it \(disk full\), so main was not moved/) });
    expect(await setup.mainCommit()).toBe(mainBefore);
    expect(recorder.events.map((event) => event.type)).not.toContain('merge.landed');
    const intents: MergeIntent[] = [];
    const again = landed(await mergeToMain(repo, workspace, { message: 'Seven retries', onIntent: (intent) => { intents.push(intent); } }));
    expect(again.mainBefore).toBe(mainBefore);
    expect(intents.map((intent) => intent.commit)).toEqual([again.commit]);
    expect(await setup.temporary.git(['show', `${again.commit}:config.ts`])).toMatch(/retries: [67]/);
  });

  it('lands nothing twice when the process died right after the swap, even once the trunk changed those lines again', async () => {
    const { temporary } = setup;
    // Something lands first, so the work is replayed onto a main its branch is not based on:
    // what lands is another commit than the one on the workspace's branch.
    const before = await setup.workspace('before');
    await temporary.write('before.txt', 'landed first\n', before.path);
    landed(await mergeToMain(repo, before, { message: 'Before' }));
    let headAtSwap = '';
    const first = landed(
      await mergeToMain(repo, workspace, {
        message: 'Seven retries',
        onIntent: () => {
          headAtSwap = commitNow(workspace.gitDir, 'HEAD');
        },
      }),
    );
    if (via === 'in-process') expect(headAtSwap).not.toBe(first.commit);
    // The workspace as the killed process left it: its branch where it was when main moved.
    await temporary.git(['reset', '--quiet', '--hard', headAtSwap], workspace.path);
    await closeRepositoryObjects(repo);
    // After the restart, and before the agent merges again, another merge changes those very lines.
    const later = await setup.workspace('later');
    const landedConfig = await temporary.read('config.ts', later.path);
    await temporary.write('config.ts', landedConfig.replace(/retries: \d/, 'retries: 9'), later.path);
    const mainCommit = landed(await mergeToMain(repo, later, { message: 'Nine retries' })).commit;
    const commits = await temporary.git(['rev-list', '--count', repo.mainBranch]);

    expect(await settleInterruptedMerge(repo, [{ commit: first.commit, mainBefore: first.mainBefore, branch: workspace.branch }])).toEqual({
      landed: true,
      commit: first.commit,
      files: ['config.ts'],
    });
    const again = await mergeToMain(repo, workspace, { message: 'Seven retries, again' });
    expect(again).toMatchObject({ status: 'nothing-to-merge' });
    expect(await setup.mainCommit()).toBe(mainCommit);
    expect(await temporary.git(['rev-list', '--count', repo.mainBranch])).toBe(commits);
    expect(await temporary.git(['show', `${repo.mainBranch}:config.ts`])).toBe(CONFIG.replace('retries: 3', 'retries: 9'));
    const patchIds = await mainPatchIds(setup);
    expect(new Set(patchIds).size).toBe(patchIds.length);
  });
});

describe('settleInterruptedMerge', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n' });
  });
  afterEach(async () => {
    await closeRepositoryObjects(setup.repo);
    await setup.temporary.remove();
  });

  it('finds a landing the trunk has moved past, and says nothing landed for commits it lacks or never reached', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('one.txt', 'one\n', workspace.path);
    await temporary.write('two.txt', 'two\n', workspace.path);
    const intents: MergeIntent[] = [];
    const outcome = landed(await mergeToMain(repo, workspace, { message: 'Two files', onIntent: (intent) => { intents.push(intent); } }));
    advanceMainNow(repo);
    advanceMainNow(repo);
    expect(await settleInterruptedMerge(repo, intents)).toEqual({ landed: true, commit: outcome.commit, files: ['one.txt', 'two.txt'] });

    const unlanded = (await temporary.git(['commit-tree', `${outcome.commit}^{tree}`, '-p', outcome.mainBefore, '-m', 'Never landed'])).trim();
    const branch = workspace.branch;
    expect(await settleInterruptedMerge(repo, [{ commit: unlanded, mainBefore: outcome.mainBefore, branch }])).toEqual({ landed: false });
    expect(await settleInterruptedMerge(repo, [{ commit: 'f'.repeat(40), mainBefore: outcome.mainBefore, branch }])).toEqual({ landed: false });
    expect(await settleInterruptedMerge(repo, [])).toEqual({ landed: false });
  });
});
