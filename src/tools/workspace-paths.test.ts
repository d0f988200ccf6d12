import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceFixture } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';
import { resolveWorkspacePath } from './workspace-paths.js';

describe('resolveWorkspacePath', () => {
  let fixture: WorkspaceFixture;
  beforeEach(() => {
    fixture = createWorkspaceFixture();
  });
  afterEach(() => fixture.remove());

  const escape = (path: string) =>
    `path escapes the workspace: ${path}; use a path inside the workspace, relative to its root`;

  it('resolves relative paths, the root itself and absolute paths inside', async () => {
    const relative = await resolveWorkspacePath(fixture.root, 'src/./main.ts');
    expect(relative).toEqual({
      ok: true,
      path: { display: 'src/main.ts', real: join(fixture.root, 'src', 'main.ts'), realRoot: fixture.root },
    });
    const root = await resolveWorkspacePath(fixture.root, '.');
    expect(root.ok && root.path.display).toBe('.');
    const absolute = await resolveWorkspacePath(fixture.root, join(fixture.root, 'src', 'new', 'file.ts'));
    expect(absolute.ok && absolute.path.display).toBe(join('src', 'new', 'file.ts'));
  });

  it('allows .. that stays inside and names that merely start with two dots', async () => {
    const inside = await resolveWorkspacePath(fixture.root, 'src/../src/main.ts');
    expect(inside.ok && inside.path.display).toBe(join('src', 'main.ts'));
    const dotted = await resolveWorkspacePath(fixture.root, '..notes.md');
    expect(dotted.ok && dotted.path.display).toBe('..notes.md');
  });

  it('refuses .. that leads out and absolute paths outside', async () => {
    expect(await resolveWorkspacePath(fixture.root, '../outside/secret.txt')).toEqual({
      ok: false,
      error: escape('../outside/secret.txt'),
    });
    expect(await resolveWorkspacePath(fixture.root, 'src/../../x')).toEqual({ ok: false, error: escape('src/../../x') });
    expect(await resolveWorkspacePath(fixture.root, '/etc/passwd')).toEqual({ ok: false, error: escape('/etc/passwd') });
    expect(await resolveWorkspacePath(fixture.root, '..')).toEqual({ ok: false, error: escape('..') });
  });

  it('refuses symlinks whose target is outside: file, directory, dangling, and nested under a linked directory', async () => {
    for (const path of ['file-link', 'dir-link', 'dir-link/secret.txt', 'dir-link/new/deep.txt', 'dangling-link']) {
      expect(await resolveWorkspacePath(fixture.root, path)).toEqual({ ok: false, error: escape(path) });
    }
  });

  it('follows symlinks that stay inside', async () => {
    symlinkSync('src', join(fixture.root, 'source-link'));
    symlinkSync('src/not-yet.ts', join(fixture.root, 'inner-dangling'));
    const linked = await resolveWorkspacePath(fixture.root, 'source-link/main.ts');
    expect(linked.ok && linked.path.real).toBe(join(fixture.root, 'src', 'main.ts'));
    const dangling = await resolveWorkspacePath(fixture.root, 'inner-dangling');
    expect(dangling.ok && dangling.path.real).toBe(join(fixture.root, 'src', 'not-yet.ts'));
  });

  it('refuses .git and anything in it, also through a symlink', async () => {
    const gitError = (path: string) => expect.stringContaining(`path is inside .git: ${path};`);
    expect(await resolveWorkspacePath(fixture.root, '.git')).toEqual({ ok: false, error: gitError('.git') });
    expect(await resolveWorkspacePath(fixture.root, '.git/HEAD')).toEqual({ ok: false, error: gitError('.git/HEAD') });
    mkdirSync(join(fixture.root, 'vendor', 'lib', '.git'), { recursive: true });
    expect(await resolveWorkspacePath(fixture.root, 'vendor/lib/.git/config')).toMatchObject({ ok: false });
    symlinkSync('.git', join(fixture.root, 'git-link'));
    expect(await resolveWorkspacePath(fixture.root, 'git-link/HEAD')).toEqual({ ok: false, error: gitError('git-link/HEAD') });
  });

  it('works when the workspace root itself is reached through a symlink', async () => {
    const alias = join(fixture.root, '..', 'workspace-alias');
    symlinkSync(fixture.root, alias);
    const byRealPath = await resolveWorkspacePath(alias, join(fixture.root, 'src', 'main.ts'));
    expect(byRealPath.ok && byRealPath.path.display).toBe(join('src', 'main.ts'));
    const byAlias = await resolveWorkspacePath(alias, join(alias, 'src', 'main.ts'));
    expect(byAlias.ok && byAlias.path.real).toBe(join(fixture.root, 'src', 'main.ts'));
    expect(await resolveWorkspacePath(alias, '../outside/secret.txt')).toMatchObject({ ok: false });
  });

  it('reports a loop of symbolic links, an empty path and a missing workspace', async () => {
    symlinkSync('loop-b', join(fixture.root, 'loop-a'));
    symlinkSync('loop-a', join(fixture.root, 'loop-b'));
    expect(await resolveWorkspacePath(fixture.root, 'loop-a')).toEqual({
      ok: false,
      error: 'path has a loop of symbolic links: loop-a',
    });
    expect(await resolveWorkspacePath(fixture.root, '')).toMatchObject({ ok: false, error: expect.stringMatching(/^path is empty/) });
    expect(await resolveWorkspacePath(join(fixture.root, 'missing'), 'a.txt')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^the workspace directory does not exist/),
    });
  });
});
