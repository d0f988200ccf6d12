import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MergeIntent } from '../workspace/merge/merge-to-main.js';
import { closeRepositoryObjects } from '../workspace/git/repository-objects.js';
import { createMergeTestSetup } from '../workspace/testing/merge-setup.js';
import type { MergeTestSetup } from '../workspace/testing/merge-setup.js';
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
