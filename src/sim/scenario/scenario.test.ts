import { describe, expect, it } from 'vitest';
import type { JsonValue, SpecModule } from '../../spec/colony-spec.js';
import { parseScenario } from './scenario.js';
import { indexLineFor, renderModuleSource, renderModuleTest, testPathFor, wrongAnswerFor } from './module-render.js';

function task(spec: unknown): string {
  return `# A task\n\nBuild this.\n\n\`\`\`colony-spec\n${JSON.stringify(spec, null, 2)}\n\`\`\`\n`;
}

const pad = {
  path: 'src/text/pad.js',
  exports: [
    {
      name: 'padLeft',
      params: ['text', 'width', 'fill'],
      body: 'return String(text).padStart(width, fill);',
      cases: [{ args: ['a', 3, '-'], returns: '--a' }],
    },
  ],
};
const project = { test: 'node --test', index: 'src/index.js' };

describe('parseScenario', () => {
  it('reads the first colony-spec block of a task', () => {
    const parsed = parseScenario(task({ project, modules: [pad] }));
    expect(parsed).toEqual({ ok: true, scenario: { project, modules: [pad] } });
  });

  it('says when there is no block, and shows the expected shape', () => {
    const parsed = parseScenario('Make the library nicer, please.');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('The task has no colony-spec block');
    expect(parsed.error).toContain('```colony-spec\n{\n  "project"');
  });

  it('says when the block is not JSON', () => {
    const parsed = parseScenario('```colony-spec\n{ "project": \n```');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toMatch(/^The colony-spec block is not valid JSON: .+/);
    expect(parsed.error).toContain('Expected a fenced code block tagged colony-spec');
  });

  it('names every missing or wrong field by its path', () => {
    const parsed = parseScenario(
      task({
        project: { index: 'src/index.ts' },
        modules: [{ path: 'src/a.js', exports: [{ name: 'not an identifier', cases: [] }] }, { path: '../b.js', exports: [] }],
      }),
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('The colony-spec block does not have the expected shape:');
    expect(parsed.error).toContain('- project.test: ');
    expect(parsed.error).toContain('- project.index: must be a relative path ending in .js');
    expect(parsed.error).toContain('- modules[0].exports[0].name: must be a JavaScript identifier');
    expect(parsed.error).toContain('- modules[0].exports[0].cases: needs at least one case');
    expect(parsed.error).toContain('- modules[1].path: must be a relative path ending in .js');
    expect(parsed.error).toContain('- modules[1].exports: needs at least one function');
  });

  it('rejects a module listed twice and cases that disagree', () => {
    const lookup = { name: 'f', cases: [{ args: [1], returns: 1 }, { args: [1], returns: 2 }] };
    const parsed = parseScenario(task({ project, modules: [pad, pad, { path: 'src/f.js', exports: [lookup] }] }));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('- modules[1].path: src/text/pad.js is listed twice');
    expect(parsed.error).toContain('- modules[2].exports[0].cases: two cases give different answers for the arguments [1]');
  });
});

describe('rendering', () => {
  const lookup: SpecModule = {
    path: 'src/list/pick.js',
    exports: [{ name: 'pick', cases: [{ args: [[1, 2], 0], returns: 1 }, { args: [{ a: 'x' }, 'a'], returns: 'x' }] }],
  };

  it('places the test next to the module and the index line relative to the index folder', () => {
    expect(testPathFor('src/text/pad.js')).toBe('src/text/pad.test.js');
    expect(indexLineFor('src/index.js', 'src/text/pad.js')).toBe("export * from './text/pad.js';");
    expect(indexLineFor('src/index.js', 'lib/pad.js')).toBe("export * from '../lib/pad.js';");
    expect(indexLineFor('index.js', 'pad.js')).toBe("export * from './pad.js';");
  });

  it('writes a function with the given body, and a special case that answers wrongly when buggy', async () => {
    const module = pad as SpecModule;
    const correct = await importSource(renderModuleSource(module, { buggy: false }));
    const buggy = await importSource(renderModuleSource(module, { buggy: true }));
    expect(correct.padLeft?.('a', 3, '-')).toBe('--a');
    expect(buggy.padLeft?.('a', 3, '-')).toBe('--');
    expect(buggy.padLeft?.('b', 2, '*')).toBe('*b');
  });

  it('answers a function given only by its cases from a table, and throws a clear error otherwise', async () => {
    const correct = await importSource(renderModuleSource(lookup, { buggy: false }));
    expect(correct.pick?.([1, 2], 0)).toBe(1);
    expect(correct.pick?.({ a: 'x' }, 'a')).toBe('x');
    expect(() => correct.pick?.('nope')).toThrow('pick has no answer for the arguments ["nope"]');
    const buggy = await importSource(renderModuleSource(lookup, { buggy: true }));
    expect(buggy.pick?.([1, 2], 0)).toBe(2);
  });

  it('writes a node:test file that checks every case with deepStrictEqual', () => {
    const test = renderModuleTest(lookup);
    expect(test).toContain("import { pick } from './pick.js';");
    expect(test).toContain('assert.deepStrictEqual(pick([1,2], 0), 1);');
    expect(test).toContain('test("pick({\\"a\\":\\"x\\"}, \\"a\\") returns \\"x\\"", () => {');
  });

  it('makes a wrong answer of the same kind for every JSON value', () => {
    const values: JsonValue[] = ['ab', '', 3, true, null, [1, 2], [], { a: 1 }, {}];
    for (const value of values) {
      expect(wrongAnswerFor(value)).not.toEqual(value);
    }
  });
});

type Exports = Record<string, ((...args: unknown[]) => unknown) | undefined>;

async function importSource(source: string): Promise<Exports> {
  return (await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`)) as Exports;
}
