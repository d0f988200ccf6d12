import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSearchTool, MAX_SEARCH_MATCHES } from './search-tool.js';
import type { SearchInput } from './search-tool.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('search', () => {
  let fixture: WorkspaceFixture;
  const search = (input: SearchInput, signal?: AbortSignal) =>
    createSearchTool(fixture.root).execute(input, toolContext(signal));

  beforeEach(() => {
    fixture = createWorkspaceFixture();
    mkdirSync(join(fixture.root, 'src', 'lib'));
    writeFileSync(join(fixture.root, 'src', 'lib', 'math.ts'), 'export function add(a, b) {\n  return a + b;\n}\n');
    writeFileSync(join(fixture.root, 'src', 'lib', 'math.test.ts'), "import { add } from './math.js';\nadd(1, 2);\n");
    writeFileSync(join(fixture.root, '.hidden.ts'), 'const add = 0;\n');
    writeFileSync(join(fixture.root, '.git', 'config'), 'add = true\n');
  });
  afterEach(() => fixture.remove());

  it('finds matches as file:line:text, sorted, hidden files included and .git and outside links skipped', async () => {
    writeFileSync(join(fixture.outside, 'secret.txt'), 'add outside\n');
    expect(await search({ pattern: 'add' })).toEqual({
      ok: true,
      output: [
        '.hidden.ts:1:const add = 0;',
        "src/lib/math.test.ts:1:import { add } from './math.js';",
        'src/lib/math.test.ts:2:add(1, 2);',
        'src/lib/math.ts:1:export function add(a, b) {',
      ].join('\n'),
    });
  });

  it('narrows by path, including a single file, and by glob', async () => {
    expect(await search({ pattern: 'return', path: 'src/lib' })).toEqual({ ok: true, output: 'src/lib/math.ts:2:  return a + b;' });
    expect(await search({ pattern: 'add\\(', path: 'src/lib/math.test.ts' })).toEqual({
      ok: true,
      output: 'src/lib/math.test.ts:2:add(1, 2);',
    });
    expect(await search({ pattern: 'add', glob: '*.test.ts' })).toEqual({
      ok: true,
      output: "src/lib/math.test.ts:1:import { add } from './math.js';\nsrc/lib/math.test.ts:2:add(1, 2);",
    });
  });

  it('never searches .git, whatever glob is given, in the workspace and in a nested repository', async () => {
    writeFileSync(join(fixture.root, '.git', 'config'), '[core]\n\tbare = false\n');
    execFileSync('git', ['-c', 'init.defaultBranch=main', 'init', '--quiet', join(fixture.root, 'vendor', 'lib')]);
    writeFileSync(join(fixture.root, 'vendor', 'lib', 'core.txt'), '[core] in a tracked file\n');
    // A linked worktree or a submodule has a .git file instead of a directory.
    mkdirSync(join(fixture.root, 'vendor', 'linked'));
    writeFileSync(join(fixture.root, 'vendor', 'linked', '.git'), 'gitdir: ../core/.git/worktrees/linked\n');
    const globs = ['**', '*', '.git', '.git/**', '.git/*', '**/.git/*', '**/.git/**', '**/config', '{.git,vendor}/**', '.gi[t]/**'];
    for (const glob of globs) {
      const result = await search({ pattern: 'core', glob });
      const output = result.ok ? result.output : result.error;
      expect(output, `glob ${glob}`).not.toMatch(/(^|\/)\.git[/:]/m);
    }
    expect(await search({ pattern: 'core', glob: '**' })).toEqual({ ok: true, output: 'vendor/lib/core.txt:1:[core] in a tracked file' });
  });

  it('answers no matches as a normal result', async () => {
    expect(await search({ pattern: 'multiply' })).toEqual({ ok: true, output: 'no matches' });
  });

  it('reports an invalid regex with ripgrep’s message', async () => {
    const result = await search({ pattern: 'add(' });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^search failed: .*regex parse error[\s\S]*unclosed group/) });
  });

  it('caps the number of matches with a note', async () => {
    writeFileSync(join(fixture.root, 'many.txt'), 'needle\n'.repeat(MAX_SEARCH_MATCHES + 50));
    const result = await search({ pattern: 'needle', path: 'many.txt' });
    const lines = result.ok ? result.output.split('\n') : [];
    expect(lines).toHaveLength(MAX_SEARCH_MATCHES + 1);
    expect(lines[MAX_SEARCH_MATCHES - 1]).toBe(`many.txt:${MAX_SEARCH_MATCHES}:needle`);
    expect(lines[MAX_SEARCH_MATCHES]).toMatch(/^\[\.\.\. stopped after 200 matches/);
  });

  it('refuses paths that escape the workspace, a missing path, and a cancelled call', async () => {
    for (const path of ['..', 'dir-link', 'file-link', fixture.outside]) {
      expect(await search({ pattern: 'secret', path })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/^path escapes the workspace/),
      });
    }
    expect(await search({ pattern: 'x', path: 'missing' })).toMatchObject({ ok: false, error: expect.stringMatching(/^path does not exist/) });
    expect(await search({ pattern: 'add' }, AbortSignal.abort())).toEqual({ ok: false, error: 'search was cancelled' });
  });
});
