import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventBodySchema } from '../../events/event-types.js';
import { hasConflictMarkers } from './conflict-markers.js';
import { mergeToMain } from './merge-to-main.js';
import type { MergeOutcome } from './merge-to-main.js';
import { createMergeTestSetup, eventRecorder } from '../testing/merge-setup.js';
import type { MergeTestSetup } from '../testing/merge-setup.js';
import type { Workspace } from '../workspace.js';

const CONFIG = 'export const config = {\n  name: "colony",\n  retries: 3,\n};\n';
const NOTES = 'first line\nsecond line\n';

function landed(outcome: MergeOutcome): Extract<MergeOutcome, { status: 'landed' }> {
  if (outcome.status !== 'landed') throw new Error(`expected landed, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('mergeToMain with conflicts', () => {
  let setup: MergeTestSetup;
  let first: Workspace;
  let second: Workspace;
  let firstCommit: string;
  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'config.ts': CONFIG, 'notes.txt': NOTES });
    first = await setup.workspace('first');
    second = await setup.workspace('second');
    await setup.temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 5'), first.path);
    firstCommit = landed(await mergeToMain(setup.repo, first, { message: 'Five retries' })).commit;
  });
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('hands a textual conflict back with the rebase stopped and markers in the file', async () => {
    const { temporary, repo } = setup;
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    const recorder = eventRecorder();
    const outcome = await mergeToMain(repo, second, { message: 'Seven retries', record: recorder.record });
    expect(outcome).toEqual({ status: 'conflicted', files: ['config.ts'], mainBefore: firstCommit });
    const text = await temporary.read('config.ts', second.path);
    expect(hasConflictMarkers(text)).toBe(true);
    expect(text).toContain('retries: 5');
    expect(text).toContain('retries: 7');
    expect(await setup.mainCommit()).toBe(firstCommit);
    expect(recorder.events.map((event) => eventBodySchema.parse(event))).toEqual([
      { type: 'merge.attempted', data: { branch: 'colony/second', mainBefore: firstCommit, attempt: 1 } },
      { type: 'merge.conflicted', data: { files: ['config.ts'], mainBefore: firstCommit } },
    ]);
  });

  it('refuses to continue while markers remain, then lands the resolution', async () => {
    const { temporary, repo } = setup;
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    await temporary.write('extra.txt', 'not in conflict\n', second.path);
    expect(await mergeToMain(repo, second, { message: 'Seven retries' })).toMatchObject({ status: 'conflicted' });

    const recorder = eventRecorder();
    const again = await mergeToMain(repo, second, { message: 'unused', record: recorder.record });
    expect(again).toEqual({ status: 'conflicted', files: ['config.ts'], mainBefore: firstCommit });
    expect(recorder.events).toEqual([]);
    // Staging a file that still has markers does not hide them.
    await temporary.git(['add', 'config.ts'], second.path);
    expect(await mergeToMain(repo, second, { message: 'unused' })).toMatchObject({ status: 'conflicted', files: ['config.ts'] });

    const resolved = CONFIG.replace('retries: 3', 'retries: 6');
    await temporary.write('config.ts', resolved, second.path);
    const outcome = landed(await mergeToMain(repo, second, { message: 'unused', record: recorder.record }));
    expect(outcome.mainBefore).toBe(firstCommit);
    expect(outcome.files.sort()).toEqual(['config.ts', 'extra.txt']);
    expect(await setup.mainCommit()).toBe(outcome.commit);
    expect(await temporary.git(['show', 'main:config.ts'])).toBe(resolved);
    expect(await temporary.git(['log', '--format=%s', 'main'])).toBe('Seven retries\nFive retries\nStart\n');
    expect(await temporary.git(['rev-list', '--count', '--merges', 'main'])).toBe('0\n');
    expect((await temporary.git(['rev-parse', 'HEAD'], second.path)).trim()).toBe(outcome.commit);
    expect(await temporary.git(['status', '--porcelain'], second.path)).toBe('');
    expect(recorder.events.map((event) => event.type)).toEqual(['merge.attempted', 'merge.landed']);
  });

  it('stops again at the next conflicting commit and lands once every one is resolved', async () => {
    const { temporary, repo } = setup;
    // The first workspace lands a change to notes.txt too, after config.ts.
    await temporary.write('notes.txt', NOTES.replace('second line', 'second line, edited first'), first.path);
    const mainCommit = landed(await mergeToMain(repo, first, { message: 'Edit notes' })).commit;
    // The second workspace has two commits, each clashing with one of those.
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    await temporary.commitAll('Seven retries', second.path);
    await temporary.write('notes.txt', NOTES.replace('second line', 'second line, edited second'), second.path);
    await temporary.commitAll('Edit notes differently', second.path);

    expect(await mergeToMain(repo, second, { message: 'unused' })).toEqual({ status: 'conflicted', files: ['config.ts'], mainBefore: mainCommit });
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 6'), second.path);
    const recorder = eventRecorder();
    const next = await mergeToMain(repo, second, { message: 'unused', record: recorder.record });
    expect(next).toEqual({ status: 'conflicted', files: ['notes.txt'], mainBefore: mainCommit });
    expect(recorder.events).toEqual([{ type: 'merge.conflicted', data: { files: ['notes.txt'], mainBefore: mainCommit } }]);
    expect(hasConflictMarkers(await temporary.read('notes.txt', second.path))).toBe(true);

    await temporary.write('notes.txt', 'first line\nsecond line, edited by both\n', second.path);
    const outcome = landed(await mergeToMain(repo, second, { message: 'unused' }));
    expect(outcome.files.sort()).toEqual(['config.ts', 'notes.txt']);
    expect(await temporary.git(['log', '--format=%s', 'main'])).toBe('Edit notes differently\nSeven retries\nEdit notes\nFive retries\nStart\n');
  });

  it('takes a resolution that keeps main as it is as nothing to merge', async () => {
    const { temporary, repo } = setup;
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    expect(await mergeToMain(repo, second, { message: 'Seven retries' })).toMatchObject({ status: 'conflicted' });
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 5'), second.path);
    const outcome = await mergeToMain(repo, second, { message: 'unused' });
    expect(outcome).toMatchObject({ status: 'nothing-to-merge' });
    expect(await setup.mainCommit()).toBe(firstCommit);
    expect(await temporary.git(['status', '--porcelain'], second.path)).toBe('');
  });
});

describe('hasConflictMarkers', () => {
  it('finds the markers git writes', () => {
    expect(hasConflictMarkers('a\n<<<<<<< HEAD\nb\n')).toBe(true);
    expect(hasConflictMarkers('a\n=======\nb\n')).toBe(true);
    expect(hasConflictMarkers('a\n>>>>>>> 1234abc (message)\n')).toBe(true);
    expect(hasConflictMarkers('a\r\n=======\r\nb\r\n')).toBe(true);
    expect(hasConflictMarkers('a\n||||||| base\n')).toBe(true);
  });

  it('ignores look-alikes that are not at the start of a line or are longer runs', () => {
    expect(hasConflictMarkers('const shift = a <<<<<<< b;\n')).toBe(false);
    expect(hasConflictMarkers('Title\n==========\n')).toBe(false);
    expect(hasConflictMarkers('<<<<<<<<\n')).toBe(false);
    expect(hasConflictMarkers('clean\n')).toBe(false);
  });
});

describe('mergeToMain with concurrent appends', () => {
  let setup: MergeTestSetup;
  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('settles appends to the same file itself and hands back only the real conflict', async () => {
    setup = await createMergeTestSetup({ 'config.ts': CONFIG, 'notes.txt': NOTES });
    const { temporary, repo } = setup;
    const first = await setup.workspace('first');
    const second = await setup.workspace('second');
    await temporary.write('notes.txt', `${NOTES}from first\n`, first.path);
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 5'), first.path);
    landed(await mergeToMain(repo, first, { message: 'First' }));

    await temporary.write('notes.txt', `${NOTES}from second\n`, second.path);
    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    const conflicted = await mergeToMain(repo, second, { message: 'Second' });
    expect(conflicted).toMatchObject({ status: 'conflicted', files: ['config.ts'] });
    expect(await temporary.read('notes.txt', second.path)).toBe(`${NOTES}from first\nfrom second\n`);

    await temporary.write('config.ts', CONFIG.replace('retries: 3', 'retries: 7'), second.path);
    const recorder = eventRecorder();
    const outcome = landed(await mergeToMain(repo, second, { message: 'Second', record: recorder.record }));
    expect(outcome.autoResolved).toEqual([]);
    expect(await temporary.git(['show', 'main:notes.txt'])).toBe(`${NOTES}from first\nfrom second\n`);
  });

  it('lands a pure append conflict without the agent and records which files it settled', async () => {
    setup = await createMergeTestSetup({ 'config.ts': CONFIG, 'notes.txt': NOTES });
    const { temporary, repo } = setup;
    const first = await setup.workspace('first');
    const second = await setup.workspace('second');
    await temporary.write('notes.txt', `${NOTES}from first\n`, first.path);
    landed(await mergeToMain(repo, first, { message: 'First' }));
    await temporary.write('notes.txt', `${NOTES}from second\n`, second.path);
    const recorder = eventRecorder();
    const outcome = landed(await mergeToMain(repo, second, { message: 'Second', record: recorder.record }));
    expect(outcome.autoResolved).toEqual(['notes.txt']);
    expect(await temporary.git(['show', 'main:notes.txt'])).toBe(`${NOTES}from first\nfrom second\n`);
    expect(await temporary.git(['log', '--format=%s', 'main'])).toBe('Second\nFirst\nStart\n');
    const landing = recorder.events.find((event) => event.type === 'merge.landed');
    expect(landing?.data).toMatchObject({ autoResolved: ['notes.txt'] });
  });
});
