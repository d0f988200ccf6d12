import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';
import { createWriteFileTool } from './write-file-tool.js';
import type { WriteFileInput } from './write-file-tool.js';

describe('write_file', () => {
  let fixture: WorkspaceFixture;
  const write = (input: WriteFileInput) => createWriteFileTool(fixture.root).execute(input, toolContext());

  beforeEach(() => {
    fixture = createWorkspaceFixture();
  });
  afterEach(() => fixture.remove());

  it('creates a file and its missing parent directories', async () => {
    const result = await write({ path: 'src/deep/nested/util.ts', content: 'export const é = 1;\n' });
    expect(result).toEqual({ ok: true, output: 'wrote 21 bytes to src/deep/nested/util.ts' });
    expect(readFileSync(join(fixture.root, 'src', 'deep', 'nested', 'util.ts'), 'utf8')).toBe('export const é = 1;\n');
  });

  it('replaces an existing file, and accepts an absolute path inside the workspace', async () => {
    const path = join(fixture.root, 'src', 'main.ts');
    expect(await write({ path, content: 'changed\n' })).toEqual({ ok: true, output: 'wrote 8 bytes to src/main.ts' });
    expect(readFileSync(path, 'utf8')).toBe('changed\n');
  });

  it('refuses to write over a directory', async () => {
    mkdirSync(join(fixture.root, 'docs'));
    expect(await write({ path: 'docs', content: 'x' })).toEqual({
      ok: false,
      error: 'docs is a directory; give the path of a file to write',
    });
  });

  it('refuses a named pipe, which would block the write', async () => {
    execFileSync('mkfifo', [join(fixture.root, 'pipe')]);
    expect(await write({ path: 'pipe', content: 'x' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^pipe is not a regular file/),
    });
  });

  it('reports a parent that is a file', async () => {
    writeFileSync(join(fixture.root, 'plain'), 'x');
    expect(await write({ path: 'plain/child.txt', content: 'x' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^cannot write plain\/child\.txt: a parent of it is a file/),
    });
  });

  it('refuses every escape and writes nothing outside', async () => {
    const attempts = [
      '../outside/escaped.txt',
      join(fixture.outside, 'escaped.txt'),
      'file-link',
      'dir-link/escaped.txt',
      'dir-link/new-dir/escaped.txt',
      'dangling-link',
    ];
    for (const path of attempts) {
      expect(await write({ path, content: 'leaked\n' })).toEqual({
        ok: false,
        error: `path escapes the workspace: ${path}; use a path inside the workspace, relative to its root`,
      });
    }
    expect(readdirSync(fixture.outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(fixture.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('refuses to write into .git', async () => {
    expect(await write({ path: '.git/hooks/pre-commit', content: 'x' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^path is inside \.git/),
    });
    expect(existsSync(join(fixture.root, '.git', 'hooks'))).toBe(false);
  });
});
