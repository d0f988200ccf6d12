import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { link, mkdir, readdir, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool } from '../../src/tools/edit-file-tool.js';
import { createListDirTool } from '../../src/tools/list-dir-tool.js';
import { openWorkspaceFile, openWorkspaceFileForWriting } from '../../src/tools/open-workspace-file.js';
import { createReadFileTool, MAX_READ_BYTES } from '../../src/tools/read-file-tool.js';
import { createSearchTool } from '../../src/tools/search-tool.js';
import type { ToolResult } from '../../src/tools/tool.js';
import { resolveWorkspacePath } from '../../src/tools/workspace-paths.js';
import { createWriteFileTool } from '../../src/tools/write-file-tool.js';
import { toolContext } from '../../src/tools/testing/workspace-fixture.js';
import { openRepository } from '../../src/workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../src/workspace/testing/temporary-repository.js';
import type { Workspace } from '../../src/workspace/workspace.js';
import { createWorktreeProvider } from '../../src/workspace/providers/worktree/worktree-provider.js';

/**
 * The file tools an agent uses, against a real git worktree workspace, with everything an
 * agent could try to reach beyond it. `outside` is a directory next to the workspace holding a
 * secret; every test ends by checking it is exactly as it was.
 */
describe('file tools against an agent trying to leave its workspace', () => {
  let temporary: TemporaryRepository;
  let workspace: Workspace;
  let outside: string;
  const SECRET = 'outside secret\n';

  const tools = () => ({
    read: (path: string) => createReadFileTool(workspace.path).execute({ path }, toolContext()),
    write: (path: string, content = 'written by the agent\n') => createWriteFileTool(workspace.path).execute({ path, content }, toolContext()),
    edit: (path: string) => createEditFileTool(workspace.path).execute({ path, old_string: 'secret', new_string: 'changed' }, toolContext()),
    list: (path: string) => createListDirTool(workspace.path).execute({ path }, toolContext()),
    search: (path: string) => createSearchTool(workspace.path).execute({ pattern: 'secret', path }, toolContext()),
  });

  async function outsideIsUntouched(): Promise<void> {
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  }

  function refusedWith(result: ToolResult, pattern: RegExp): void {
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(pattern);
    expect(result.error).not.toContain('outside secret');
  }

  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/main.ts': 'export const secret = 1;\n' });
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    const base = await realpath(temporary.base);
    workspace = await createWorktreeProvider(opened.repo).create({ id: 'agent', parentDir: join(base, 'workspaces') });
    outside = join(base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), SECRET);
  });
  afterEach(async () => {
    await outsideIsUntouched();
    await temporary.remove();
  });

  it('refuses ../ escapes and absolute paths outside, in every tool', async () => {
    const { read, write, edit, list, search } = tools();
    for (const path of ['../../outside/secret.txt', join(outside, 'secret.txt'), 'src/../../../outside/secret.txt', '/etc/passwd']) {
      for (const result of [await read(path), await write(path), await edit(path), await search(path)]) refusedWith(result, /escapes the workspace/);
    }
    for (const path of ['..', '../../outside', outside, '/']) refusedWith(await list(path), /escapes the workspace/);
    refusedWith(await write('../../outside/new.txt'), /escapes the workspace/);
  });

  it('refuses reading and writing through a link to a file outside, and follows one to a file inside', async () => {
    const { read, write, edit } = tools();
    await symlink(join(outside, 'secret.txt'), join(workspace.path, 'leak'));
    refusedWith(await read('leak'), /escapes the workspace/);
    refusedWith(await write('leak'), /escapes the workspace/);
    refusedWith(await edit('leak'), /escapes the workspace/);
    await symlink('src/main.ts', join(workspace.path, 'inside-link'));
    expect(await read('inside-link')).toEqual({ ok: true, output: 'export const secret = 1;\n' });
    expect(await edit('inside-link')).toMatchObject({ ok: true });
    expect(await readFile(join(workspace.path, 'src', 'main.ts'), 'utf8')).toBe('export const changed = 1;\n');
  });

  it('refuses a link to a directory outside used as a step of the path, for every tool', async () => {
    const { read, write, edit, list, search } = tools();
    await symlink(outside, join(workspace.path, 'door'));
    for (const result of [await read('door/secret.txt'), await write('door/secret.txt'), await edit('door/secret.txt'), await list('door'), await search('door')]) {
      refusedWith(result, /escapes the workspace/);
    }
    refusedWith(await write('door/planted.txt'), /escapes the workspace/);
    refusedWith(await write('door/deeper/planted.txt'), /escapes the workspace/);
    // A search of the whole workspace does not wander through the link either.
    expect(await search('.')).toEqual({ ok: true, output: 'src/main.ts:1:export const secret = 1;' });
  });

  it('refuses a NUL in a path, and a very long path, with a short message', async () => {
    const { read, write, list } = tools();
    refusedWith(await read('src/main.ts\u0000../../outside/secret.txt'), /NUL byte/);
    refusedWith(await write('a\u0000b'), /NUL byte/);
    const long = `${'deep/'.repeat(1200)}file.txt`;
    const longName = `${'x'.repeat(300)}.txt`;
    for (const result of [await read(long), await write(long), await list(long), await write(longName)]) {
      refusedWith(result, /path is too long/);
      if (!result.ok) expect(result.error.length).toBeLessThan(500);
    }
  });

  it('answers a binary file with a clear message, not its bytes, and bounds a huge file', async () => {
    const { read } = tools();
    await writeFile(join(workspace.path, 'image.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x00, 0x01]));
    const binary = await read('image.bin');
    expect(binary).toEqual({ ok: false, error: expect.stringMatching(/^image\.bin looks like a binary file/) });
    if (!binary.ok) expect([...binary.error].filter((character) => character === '\u0000' || character === '\ufffd')).toEqual([]);
    const line = `${'y'.repeat(99)}\n`;
    await writeFile(join(workspace.path, 'huge.txt'), line.repeat(300_000));
    const huge = await read('huge.txt');
    expect(huge.ok).toBe(true);
    if (huge.ok) {
      expect(Buffer.byteLength(huge.output)).toBeLessThan(MAX_READ_BYTES + 500);
      expect(huge.output).toMatch(/\[\.\.\. truncated: showing lines 1-\d+ of 300000; call read_file with offset to see more\]$/);
    }
  });

  it('keeps the workspace’s .git out of reach: its file, its git directory, any case, through a link', async () => {
    const { read, write, edit, list } = tools();
    const gitFile = await readFile(join(workspace.path, '.git'), 'utf8');
    for (const path of ['.git', '.GIT', '.git/config', 'sub/.git/hooks/post-commit', './src/../.git']) {
      refusedWith(await write(path, 'gitdir: /tmp/elsewhere\n'), /inside \.git/);
      refusedWith(await read(path), /inside \.git/);
    }
    refusedWith(await edit('.git'), /inside \.git/);
    refusedWith(await list('.git'), /inside \.git/);
    await symlink('.git', join(workspace.path, 'innocent'));
    refusedWith(await write('innocent', 'gitdir: /tmp/elsewhere\n'), /inside \.git/);
    // The worktree's own git directory lives outside the workspace altogether.
    refusedWith(await write(join(workspace.gitDir, 'config'), '[core]\n'), /escapes the workspace/);
    refusedWith(await write(join(workspace.gitDir, 'hooks', 'post-commit'), '#!/bin/sh\n'), /escapes the workspace/);
    expect(await readFile(join(workspace.path, '.git'), 'utf8')).toBe(gitFile);
    expect((await list('.')).ok && (await list('.'))).toMatchObject({ output: expect.not.stringContaining('.git') });
  });

  it('refuses to change a file that is a hard link to a file outside', async () => {
    const { read, write, edit } = tools();
    await link(join(outside, 'secret.txt'), join(workspace.path, 'hard'));
    refusedWith(await write('hard'), /other hard link/);
    refusedWith(await edit('hard'), /other hard link/);
    // Reading it shows nothing the agent could not already read with its own commands; it is the write that matters.
    expect(await read('hard')).toMatchObject({ ok: true });
  });

  it('catches a step of the path swapped for a link between the check and the open', async () => {
    await mkdir(join(workspace.path, 'dir'));
    await writeFile(join(workspace.path, 'dir', 'secret.txt'), 'inside\n');
    const checked = await resolveWorkspacePath(workspace.path, 'dir/secret.txt');
    const checkedNew = await resolveWorkspacePath(workspace.path, 'dir/new.txt');
    if (!checked.ok || !checkedNew.ok) throw new Error('the paths are inside');
    // The agent's command swaps the directory for a link to outside after the check.
    await rename(join(workspace.path, 'dir'), join(workspace.path, 'dir-before'));
    await symlink(outside, join(workspace.path, 'dir'));
    const reading = await openWorkspaceFile(checked.path, constants.O_RDONLY, 'read');
    expect(reading).toMatchObject({ ok: false, error: expect.stringMatching(/replaced by a symbolic link while being opened/) });
    const writing = await openWorkspaceFileForWriting(checkedNew.path);
    expect(writing).toMatchObject({ ok: false, error: expect.stringMatching(/replaced by a symbolic link while being opened/) });
  });

  it('catches the file itself swapped for a link between the check and the open', async () => {
    const checked = await resolveWorkspacePath(workspace.path, 'README.md');
    if (!checked.ok) throw new Error('the path is inside');
    execFileSync('ln', ['-sf', join(outside, 'secret.txt'), join(workspace.path, 'README.md')]);
    for (const flags of [constants.O_RDONLY, constants.O_RDWR]) {
      expect(await openWorkspaceFile(checked.path, flags, 'read')).toMatchObject({ ok: false, error: expect.stringMatching(/symbolic link/) });
    }
    expect(await openWorkspaceFileForWriting(checked.path)).toMatchObject({ ok: false, error: expect.stringMatching(/symbolic link/) });
  });
});
