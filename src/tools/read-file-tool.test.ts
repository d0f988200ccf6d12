import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadFileTool, MAX_READ_BYTES } from './read-file-tool.js';
import type { ReadFileInput } from './read-file-tool.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('read_file', () => {
  let fixture: WorkspaceFixture;
  const read = (input: ReadFileInput) => createReadFileTool(fixture.root).execute(input, toolContext());
  const numberedLines = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}\n`).join('');

  beforeEach(() => {
    fixture = createWorkspaceFixture();
  });
  afterEach(() => fixture.remove());

  it('returns the raw text of a file, without line numbers', async () => {
    const text = 'first\r\n\tsecond\n\nfourth without newline';
    writeFileSync(join(fixture.root, 'notes.txt'), text);
    expect(await read({ path: 'notes.txt' })).toEqual({ ok: true, output: text });
    expect(await read({ path: 'src/main.ts' })).toEqual({ ok: true, output: 'export const answer = 42;\n' });
  });

  it('reads a range of lines with offset and limit, and says what was left out', async () => {
    writeFileSync(join(fixture.root, 'lines.txt'), numberedLines(10));
    expect(await read({ path: 'lines.txt', offset: 3, limit: 2 })).toEqual({
      ok: true,
      output: 'line 3\nline 4\n[... truncated: showing lines 3-4 of 10; call read_file with offset to see more]',
    });
    expect(await read({ path: 'lines.txt', offset: 9 })).toEqual({ ok: true, output: 'line 9\nline 10\n' });
    expect(await read({ path: 'lines.txt', offset: 11 })).toEqual({
      ok: false,
      error: 'offset 11 is past the end of lines.txt, which has 10 lines; use an offset from 1 to 10',
    });
  });

  it('stops at 2000 lines by default', async () => {
    writeFileSync(join(fixture.root, 'long.txt'), numberedLines(2_500));
    const result = await read({ path: 'long.txt' });
    expect(result.ok).toBe(true);
    const output = result.ok ? result.output : '';
    expect(output.startsWith('line 1\nline 2\n')).toBe(true);
    expect(output).toContain('line 2000\n[... truncated: showing lines 1-2000 of 2500; call read_file with offset to see more]');
    expect(output).not.toContain('line 2001');
  });

  it('reads a huge file by lines within the byte budget, counting all its lines', async () => {
    const line = `${'x'.repeat(99)}\n`;
    writeFileSync(join(fixture.root, 'huge.txt'), line.repeat(30_000));
    const result = await read({ path: 'huge.txt', offset: 20_001, limit: 5_000 });
    const shownLines = Math.floor(MAX_READ_BYTES / line.length);
    expect(result).toEqual({
      ok: true,
      output: `${line.repeat(shownLines)}[... truncated: showing lines 20001-${20_000 + shownLines} of 30000; call read_file with offset to see more]`,
    });
  });

  it('shows the start of a single line that is over the budget', async () => {
    writeFileSync(join(fixture.root, 'minified.js'), `${'a'.repeat(MAX_READ_BYTES + 10)}\nsecond\n`);
    const result = await read({ path: 'minified.js' });
    expect(result).toEqual({
      ok: true,
      output: `${'a'.repeat(MAX_READ_BYTES)}\n[... truncated: line 1 is ${MAX_READ_BYTES + 11} bytes long, showing its first ${MAX_READ_BYTES} bytes; call read_file with offset 2 for the lines after it]`,
    });
  });

  it('says so for an empty file', async () => {
    writeFileSync(join(fixture.root, 'empty.txt'), '');
    expect(await read({ path: 'empty.txt' })).toEqual({ ok: true, output: '[empty file]' });
  });

  it('refuses a binary file', async () => {
    writeFileSync(join(fixture.root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const result = await read({ path: 'image.png' });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^image\.png looks like a binary file/) });
  });

  it('refuses a named pipe, which would block the read', async () => {
    execFileSync('mkfifo', [join(fixture.root, 'pipe')]);
    expect(await read({ path: 'pipe' })).toMatchObject({ ok: false, error: expect.stringMatching(/^pipe is not a regular file/) });
  });

  it('refuses a directory and points to list_dir', async () => {
    mkdirSync(join(fixture.root, 'docs'));
    expect(await read({ path: 'docs' })).toEqual({
      ok: false,
      error: 'docs is a directory, not a file; use list_dir to see its entries',
    });
  });

  it('says a missing file does not exist and points to list_dir', async () => {
    expect(await read({ path: 'src/missing.ts' })).toEqual({
      ok: false,
      error: 'file does not exist: src/missing.ts; use list_dir to see which files are there',
    });
  });

  it('refuses paths that escape the workspace or enter .git, and reveals nothing from outside', async () => {
    for (const path of ['../outside/secret.txt', join(fixture.outside, 'secret.txt'), 'file-link', 'dir-link/secret.txt']) {
      const result = await read({ path });
      expect(result).toEqual({
        ok: false,
        error: `path escapes the workspace: ${path}; use a path inside the workspace, relative to its root`,
      });
    }
    expect(await read({ path: '.git/HEAD' })).toMatchObject({ ok: false, error: expect.stringMatching(/^path is inside \.git/) });
  });
});
