import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createListDirTool, MAX_LIST_ENTRIES } from './list-dir-tool.js';
import type { ListDirInput } from './list-dir-tool.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('list_dir', () => {
  let fixture: WorkspaceFixture;
  const list = (input: ListDirInput = {}) => createListDirTool(fixture.root).execute(input, toolContext());

  beforeEach(() => {
    fixture = createWorkspaceFixture();
  });
  afterEach(() => fixture.remove());

  it('lists the root sorted, directories with a slash, .git left out', async () => {
    writeFileSync(join(fixture.root, '.env.example'), '');
    writeFileSync(join(fixture.root, 'README.md'), '');
    symlinkSync('src', join(fixture.root, 'src-link'));
    expect(await list()).toEqual({
      ok: true,
      output: ['.env.example', 'README.md', 'dangling-link', 'dir-link/', 'file-link', 'src-link/', 'src/'].join('\n'),
    });
  });

  it('lists a subdirectory', async () => {
    mkdirSync(join(fixture.root, 'src', 'lib'));
    expect(await list({ path: 'src' })).toEqual({ ok: true, output: 'lib/\nmain.ts' });
  });

  it('says when a directory is empty', async () => {
    mkdirSync(join(fixture.root, 'empty'));
    expect(await list({ path: 'empty' })).toEqual({ ok: true, output: '[empty directory]' });
  });

  it('caps a huge directory with a note', async () => {
    mkdirSync(join(fixture.root, 'many'));
    for (let index = 0; index < MAX_LIST_ENTRIES + 5; index += 1) {
      writeFileSync(join(fixture.root, 'many', `file-${String(index).padStart(4, '0')}.txt`), '');
    }
    const result = await list({ path: 'many' });
    const lines = result.ok ? result.output.split('\n') : [];
    expect(lines).toHaveLength(MAX_LIST_ENTRIES + 1);
    expect(lines[0]).toBe('file-0000.txt');
    expect(lines[MAX_LIST_ENTRIES - 1]).toBe('file-0999.txt');
    expect(lines[MAX_LIST_ENTRIES]).toBe(
      '[... 5 more entries not shown, 1005 in total; list a subdirectory or use search with a glob to narrow down]',
    );
  });

  it('refuses a file, a missing directory, .git and escapes', async () => {
    expect(await list({ path: 'src/main.ts' })).toEqual({
      ok: false,
      error: 'src/main.ts is a file, not a directory; use read_file to read it',
    });
    expect(await list({ path: 'nope' })).toMatchObject({ ok: false, error: expect.stringMatching(/^directory does not exist: nope/) });
    expect(await list({ path: '.git' })).toMatchObject({ ok: false, error: expect.stringMatching(/^path is inside \.git/) });
    for (const path of ['..', 'dir-link', fixture.outside]) {
      expect(await list({ path })).toMatchObject({ ok: false, error: expect.stringMatching(/^path escapes the workspace/) });
    }
  });
});
