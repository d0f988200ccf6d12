import { describe, expect, it } from 'vitest';
import { createWriteScratchpadTool, MAX_SCRATCHPAD_CHARS } from './write-scratchpad-tool.js';
import { toolContext } from './testing/workspace-fixture.js';

describe('write_scratchpad', () => {
  it('replaces the scratchpad whole with each write', async () => {
    const writes: string[] = [];
    const tool = createWriteScratchpadTool((content) => writes.push(content));
    await tool.execute(tool.parameters.parse({ content: 'plan: one\n' }), toolContext());
    const second = await tool.execute(tool.parameters.parse({ content: 'plan: two' }), toolContext());
    expect(writes).toEqual(['plan: one', 'plan: two']);
    expect(second).toEqual({ ok: true, output: 'Scratchpad replaced (9 characters). It is shown to you before every answer.' });
  });

  it('refuses an empty scratchpad and one over the limit, keeping the old one', async () => {
    const writes: string[] = [];
    const tool = createWriteScratchpadTool((content) => writes.push(content));
    expect(tool.parameters.safeParse({ content: '   ' }).success).toBe(false);
    const long = await tool.execute(tool.parameters.parse({ content: 'x'.repeat(MAX_SCRATCHPAD_CHARS + 1) }), toolContext());
    expect(long.ok).toBe(false);
    if (!long.ok) expect(long.error).toContain(`the limit is ${MAX_SCRATCHPAD_CHARS}`);
    expect(writes).toEqual([]);
  });
});
