import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MergeIntent } from '../workspace/merge/merge-to-main.js';
import { closeRepositoryObjects } from '../workspace/git/repository-objects.js';
import { createMergeTestSetup } from '../workspace/testing/merge-setup.js';
import type { MergeTestSetup } from '../workspace/testing/merge-setup.js';
import { addedNoteFiles } from '../workspace/merge/note-files.js';
import { createMergeToMainTool } from './merge-to-main-tool.js';
import { toolContext } from './testing/workspace-fixture.js';

describe('merge_to_main', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n' });
  });
  afterEach(async () => {
    await closeRepositoryObjects(setup.repo);
    await setup.temporary.remove();
  });

  it('hands each swap to onIntent before main moves, and answers a failure to record it without moving main', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    const mainBefore = await setup.mainCommit();
    const refusing = createMergeToMainTool(repo, workspace, {
      record: () => undefined,
      onLanded: () => undefined,
      onIntent: () => {
        throw new Error('the event log is read-only');
      },
    });
    const refused = await refusing.execute({ message: 'Mine' }, toolContext());
    expect(refused).toEqual({ ok: false, error: expect.stringMatching(/^merge failed: colony could not record the merge .*the event log is read-only.*call merge again/) });
    expect(await setup.mainCommit()).toBe(mainBefore);

    const intents: MergeIntent[] = [];
    const landedOn: string[] = [];
    const tool = createMergeToMainTool(repo, workspace, { record: () => undefined, onLanded: (commit) => void landedOn.push(commit), onIntent: (intent) => intents.push(intent) });
    expect(await tool.execute({ message: 'Mine' }, toolContext())).toMatchObject({ ok: true });
    expect(intents).toEqual([{ commit: await setup.mainCommit(), mainBefore, branch: 'colony/w1' }]);
    expect(landedOn).toEqual([intents[0]?.commit]);
  });
});

describe('merge_to_main and the questions it asks once before a merge: notes about the work, and more', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'docs/NOTES.md': 'the project keeps notes here\n' });
  });
  afterEach(async () => {
    await closeRepositoryObjects(setup.repo);
    await setup.temporary.remove();
  });

  /** A tool that refuses with the notes files the workspace adds, as a worker's does. */
  async function noteCheckingTool(id: string) {
    const workspace = await setup.workspace(id);
    const tool = createMergeToMainTool(setup.repo, workspace, {
      record: () => undefined,
      onLanded: () => undefined,
      refuseOnce: [
        {
          check: async () => {
            const files = await addedNoteFiles(setup.repo, workspace);
            return files.length === 0 ? null : `Not merged: ${files.join(', ')}`;
          },
          refusedBefore: false,
        },
      ],
    });
    return { workspace, tool };
  }

  it('refuses the first merge that adds notes, naming them, and lands the second as it is', async () => {
    const { workspace, tool } = await noteCheckingTool('w1');
    await setup.temporary.write('src/pad.js', 'export const pad = 1;\n', workspace.path);
    await setup.temporary.write('TASK_SUMMARY.md', 'what I did\n', workspace.path);
    await setup.temporary.write('src/work-log.txt', 'step one\n', workspace.path);
    const mainBefore = await setup.mainCommit();
    expect(await tool.execute({ message: 'Pad' }, toolContext())).toEqual({ ok: false, error: 'Not merged: TASK_SUMMARY.md, src/work-log.txt' });
    expect(await setup.mainCommit()).toBe(mainBefore);

    expect(await tool.execute({ message: 'Pad' }, toolContext())).toMatchObject({ ok: true });
    expect(await setup.temporary.git(['ls-tree', '-r', '--name-only', 'main'])).toContain('TASK_SUMMARY.md');
  });

  it('lands at once a change that only edits files main has, README and notes of the project among them', async () => {
    const { workspace, tool } = await noteCheckingTool('w2');
    await setup.temporary.write('README.md', '# project, with pad\n', workspace.path);
    await setup.temporary.write('docs/NOTES.md', 'pad is in\n', workspace.path);
    await setup.temporary.write('src/pad.js', 'export const pad = 1;\n', workspace.path);
    expect(await tool.execute({ message: 'Pad' }, toolContext())).toMatchObject({ ok: true });
  });

  it('is not refused again after a restart in which a merge was refused for its notes', async () => {
    const workspace = await setup.workspace('w3');
    let asked = 0;
    const tool = createMergeToMainTool(setup.repo, workspace, {
      record: () => undefined,
      onLanded: () => undefined,
      refuseOnce: [
        {
          check: () => {
            asked += 1;
            return Promise.resolve('Not merged: NOTES.md');
          },
          refusedBefore: true,
        },
      ],
    });
    await setup.temporary.write('NOTES.md', 'what I did\n', workspace.path);
    expect(await tool.execute({ message: 'Notes' }, toolContext())).toMatchObject({ ok: true });
    expect(asked).toBe(0);
  });

  it('refuses with each in turn, once each, and lands the merge that follows', async () => {
    const workspace = await setup.workspace('w1');
    const asked: string[] = [];
    const question = (name: string) => ({
      check: () => {
        asked.push(name);
        return Promise.resolve(`Not merged: ${name}`);
      },
      refusedBefore: false,
    });
    const tool = createMergeToMainTool(setup.repo, workspace, { record: () => undefined, onLanded: () => undefined, refuseOnce: [question('notes'), question('tests')] });
    await setup.temporary.write('src/pad.js', 'export const pad = 1;\n', workspace.path);
    expect(await tool.execute({ message: 'Pad' }, toolContext())).toEqual({ ok: false, error: 'Not merged: notes' });
    expect(await tool.execute({ message: 'Pad' }, toolContext())).toEqual({ ok: false, error: 'Not merged: tests' });
    expect(await tool.execute({ message: 'Pad' }, toolContext())).toMatchObject({ ok: true });
    expect(asked).toEqual(['notes', 'tests']);
  });
});
