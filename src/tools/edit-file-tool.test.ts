import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool } from './edit-file-tool.js';
import type { EditFileInput } from './edit-file-tool.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('edit_file', () => {
  let fixture: WorkspaceFixture;
  let file = '';
  const edit = (input: Omit<EditFileInput, 'path'> & { path?: string }) =>
    createEditFileTool(fixture.root).execute({ path: 'app.ts', ...input }, toolContext());
  const original = 'const a = 1;\nconst b = 2;\nconst c = a + b;\nlog(a);\n';

  beforeEach(() => {
    fixture = createWorkspaceFixture();
    file = join(fixture.root, 'app.ts');
    writeFileSync(file, original);
  });
  afterEach(() => fixture.remove());

  it('replaces a unique string', async () => {
    expect(await edit({ old_string: 'const b = 2;', new_string: 'const b = 3;' })).toEqual({
      ok: true,
      output: 'edited app.ts: 1 replacement',
    });
    expect(readFileSync(file, 'utf8')).toBe(original.replace('const b = 2;', 'const b = 3;'));
  });

  it('inserts replacement text literally, $ patterns included', async () => {
    await edit({ old_string: 'log(a);', new_string: "log('$&', `$1`);" });
    expect(readFileSync(file, 'utf8').endsWith("log('$&', `$1`);\n")).toBe(true);
  });

  it('says when the string is not found, and leaves the file alone', async () => {
    expect(await edit({ old_string: 'const d = 4;', new_string: 'x' })).toEqual({
      ok: false,
      error: 'old_string was not found in app.ts; read_file it and copy the text exactly, including whitespace and indentation',
    });
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('hints at CRLF line endings when they are why the string did not match', async () => {
    writeFileSync(file, 'one\r\ntwo\r\n');
    const result = await edit({ old_string: 'one\ntwo', new_string: 'x' });
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining('CRLF line endings') });
  });

  it('refuses an ambiguous string, saying how many times it occurs', async () => {
    expect(await edit({ old_string: 'a', new_string: 'z' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^old_string occurs 3 times in app\.ts; include more surrounding lines/),
    });
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('replaces every occurrence with replace_all', async () => {
    expect(await edit({ old_string: 'a', new_string: 'alpha', replace_all: true })).toEqual({
      ok: true,
      output: 'edited app.ts: 3 replacements',
    });
    expect(readFileSync(file, 'utf8')).toBe(original.split('a').join('alpha'));
  });

  it('refuses an empty old_string and a no-op edit', async () => {
    expect(await edit({ old_string: '', new_string: 'x' })).toMatchObject({ ok: false, error: expect.stringMatching(/^old_string is empty/) });
    expect(await edit({ old_string: 'a', new_string: 'a' })).toMatchObject({ ok: false, error: expect.stringContaining('the same') });
  });

  it('refuses a missing file, a binary file and paths outside the workspace', async () => {
    expect(await edit({ path: 'missing.ts', old_string: 'a', new_string: 'b' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^file does not exist: missing\.ts/),
    });
    execFileSync('mkfifo', [join(fixture.root, 'pipe')]);
    expect(await edit({ path: 'pipe', old_string: 'a', new_string: 'b' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^pipe is not a regular file/),
    });
    writeFileSync(join(fixture.root, 'blob.bin'), Buffer.from([0x61, 0x00, 0x62]));
    expect(await edit({ path: 'blob.bin', old_string: 'a', new_string: 'b' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('binary'),
    });
    for (const path of ['file-link', 'dir-link/secret.txt', '../outside/secret.txt']) {
      expect(await edit({ path, old_string: 'outside', new_string: 'changed' })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^path escapes the workspace/),
      });
    }
    expect(readFileSync(join(fixture.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });
});
