import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDirectory, pathExists } from './path-exists.js';

describe('pathExists and isDirectory', () => {
  let base: string;
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'colony-path-exists-'));
    await writeFile(join(base, 'file.txt'), 'text\n');
    await mkdir(join(base, 'folder'));
    await symlink(join(base, 'folder'), join(base, 'link-to-folder'));
    await symlink(join(base, 'nowhere'), join(base, 'dangling'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('finds files, directories and links, dangling ones included', async () => {
    for (const name of ['file.txt', 'folder', 'link-to-folder', 'dangling']) expect(await pathExists(join(base, name))).toBe(true);
  });

  it('reports a missing path, and a path under a file, as missing', async () => {
    expect(await pathExists(join(base, 'missing'))).toBe(false);
    expect(await pathExists(join(base, 'file.txt', 'inside'))).toBe(false);
  });

  it('tells directories, and links to them, from everything else', async () => {
    expect(await isDirectory(join(base, 'folder'))).toBe(true);
    expect(await isDirectory(join(base, 'link-to-folder'))).toBe(true);
    for (const name of ['file.txt', 'dangling', 'missing']) expect(await isDirectory(join(base, name))).toBe(false);
  });
});
