import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeRepositoryObjects } from '../git/repository-objects.js';
import { createMergeTestSetup, type MergeTestSetup } from '../testing/merge-setup.js';
import { addedNoteFiles, hasNoteName } from './note-files.js';

describe('hasNoteName', () => {
  it('knows the names models give their notes, in any case and with any separator', () => {
    for (const path of ['NOTES.md', 'notes.txt', 'TASK_SUMMARY.md', 'task-summary.md', 'TaskSummary.md', 'src/lib/IMPLEMENTATION_NOTES.md', 'WORKLOG', 'work_log.txt', 'Progress.md', 'handoff.md', 'changes-summary.md']) {
      expect(hasNoteName(path), path).toBe(true);
    }
  });

  it('leaves project files alone: other names, other extensions, a README', () => {
    for (const path of ['README.md', 'CHANGELOG.md', 'ROADMAP.md', 'src/notes.js', 'summary.json', 'docs/progress-bar.md', 'src/summary/index.js', '.notes']) {
      expect(hasNoteName(path), path).toBe(false);
    }
  });
});

describe('addedNoteFiles', () => {
  let setup: MergeTestSetup;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n', 'docs/NOTES.md': 'the project keeps notes here\n', '.gitignore': 'scratch/\n' });
  });
  afterEach(async () => {
    await closeRepositoryObjects(setup.repo);
    await setup.temporary.remove();
  });

  it('lists the notes files the workspace adds, committed or not, and none main already has, nor ignored or deleted ones', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w1');
    await temporary.write('src/pad.js', 'export const pad = 1;\n', workspace.path);
    await temporary.write('README.md', '# project, changed\n', workspace.path);
    await temporary.write('docs/NOTES.md', 'changed, still the project\n', workspace.path);
    await temporary.write('TASK_SUMMARY.md', 'what I did\n', workspace.path);
    await temporary.write('src/work-log.txt', 'step one\n', workspace.path);
    await temporary.write('scratch/notes.md', 'ignored\n', workspace.path);
    expect(await addedNoteFiles(repo, workspace)).toEqual(['TASK_SUMMARY.md', 'src/work-log.txt']);

    await temporary.commitAll('Work and notes', workspace.path);
    expect(await addedNoteFiles(repo, workspace)).toEqual(['TASK_SUMMARY.md', 'src/work-log.txt']);

    await rm(join(workspace.path, 'TASK_SUMMARY.md'));
    expect(await addedNoteFiles(repo, workspace)).toEqual(['src/work-log.txt']);
  });

  it('lists nothing for a workspace that adds only project files', async () => {
    const { temporary, repo } = setup;
    const workspace = await setup.workspace('w2');
    await temporary.write('src/pad.js', 'export const pad = 1;\n', workspace.path);
    expect(await addedNoteFiles(repo, workspace)).toEqual([]);
  });
});
