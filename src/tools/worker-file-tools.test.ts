import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createWorkerFileTools } from './worker-file-tools.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('createWorkerFileTools', () => {
  let fixture: WorkspaceFixture;
  beforeEach(() => {
    fixture = createWorkspaceFixture();
  });
  afterEach(() => fixture.remove());

  it('gives the six workspace tools in order, each described and with described parameters', () => {
    const tools = createWorkerFileTools(fixture.root);
    expect(tools.map((tool) => tool.name)).toEqual(['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command']);
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(100);
      const schema = z.toJSONSchema(tool.parameters) as { properties: Record<string, { description?: string }> };
      for (const [name, property] of Object.entries(schema.properties)) {
        expect(property.description, `${tool.name}.${name}`).toBeTruthy();
      }
    }
  });

  it('binds every tool to the same workspace', async () => {
    const [readFile, writeFile, , , , runCommand] = createWorkerFileTools(fixture.root);
    await writeFile?.execute({ path: 'notes/todo.md', content: 'ship it\n' }, toolContext());
    expect(await readFile?.execute({ path: 'notes/todo.md' }, toolContext())).toEqual({ ok: true, output: 'ship it\n' });
    expect(await runCommand?.execute({ command: 'cat notes/todo.md' }, toolContext())).toEqual({
      ok: true,
      output: 'exit code: 0\n\nship it\n',
    });
  });
});
