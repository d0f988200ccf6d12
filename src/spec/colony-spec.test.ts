import { describe, expect, it } from 'vitest';
import { parseColonySpec } from './colony-spec.js';

function goal(spec: unknown): string {
  return `# A goal\n\nMake the CLI faster.\n\n\`\`\`colony-spec\n${JSON.stringify(spec, null, 2)}\n\`\`\`\n`;
}

describe('parseColonySpec', () => {
  it('finds no spec in a goal without a block', () => {
    expect(parseColonySpec('# Speed\n\nMake the CLI start in under 100 ms.\n')).toEqual({ ok: true, spec: null });
  });

  it('takes a block with the test command alone, as a real goal carries it', () => {
    expect(parseColonySpec(goal({ project: { test: 'npm test' } }))).toEqual({ ok: true, spec: { project: { test: 'npm test' } } });
    expect(parseColonySpec(goal({}))).toEqual({ ok: true, spec: {} });
  });

  it('takes a module list and checks it as strictly as the sim does', () => {
    const modules = [{ path: 'src/a.js', exports: [{ name: 'a', cases: [{ args: [1], returns: 1 }, { args: [1], returns: 2 }] }] }];
    const parsed = parseColonySpec(goal({ modules }));
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain('- modules[0].exports[0].cases: two cases give different answers for the arguments [1]');
  });

  it('refuses a wrong field by its path, and a block that is not JSON', () => {
    const wrong = parseColonySpec(goal({ project: { test: '', index: 'src/index.ts' } }));
    expect(wrong.ok ? '' : wrong.error).toContain('- project.test: must be the command that runs the tests');
    expect(wrong.ok ? '' : wrong.error).toContain('- project.index: must be a relative path ending in .js');
    const broken = parseColonySpec('```colony-spec\n{ "project": \n```');
    expect(broken.ok ? '' : broken.error).toMatch(/^The colony-spec block is not valid JSON: .+/);
  });

  it('takes the npm packages a module imports by exact version, and says which name or version is wrong', () => {
    const module = { path: 'src/a.js', exports: [{ name: 'a', cases: [{ args: [1], returns: 1 }] }] };
    const good = parseColonySpec(goal({ modules: [{ ...module, packages: { 'is-odd': '3.0.1', '@scope/name': '1.0.0-beta.2' } }] }));
    expect(good).toMatchObject({ ok: true, spec: { modules: [{ packages: { 'is-odd': '3.0.1', '@scope/name': '1.0.0-beta.2' } }] } });
    const wrong = parseColonySpec(goal({ modules: [{ ...module, packages: { 'Is Odd': '3.0.1', 'kind-of': '^6.0.0' } }] }));
    expect(wrong.ok ? '' : wrong.error).toContain('must be an npm package name, like is-odd');
    expect(wrong.ok ? '' : wrong.error).toContain('- modules[0].packages.kind-of: must be an exact version, like 3.0.1');
  });

  it('takes the modules a module uses when they come before it in the list or are not in it, and says which come after', () => {
    const module = (path: string, uses?: string[]) => ({ path, exports: [{ name: path.replace(/\W/g, ''), cases: [{ args: [1], returns: 1 }] }], ...(uses === undefined ? {} : { uses }) });
    const good = parseColonySpec(goal({ modules: [module('src/a.js'), module('src/b.js', ['src/a.js'])] }));
    expect(good).toMatchObject({ ok: true, spec: { modules: [{ path: 'src/a.js' }, { path: 'src/b.js', uses: ['src/a.js'] }] } });
    // A task's brief carries its module alone: what it uses is built by other tasks.
    expect(parseColonySpec(goal({ modules: [module('src/b.js', ['src/a.js'])] })).ok).toBe(true);
    const wrong = parseColonySpec(goal({ modules: [module('src/a.js', ['src/b.js']), module('src/b.js', ['src/b.js', 'src/c.js'])] }));
    expect(wrong.ok ? '' : wrong.error).toContain('- modules[0].uses[0]: src/b.js must be listed before src/a.js, which uses it');
    expect(wrong.ok ? '' : wrong.error).toContain('- modules[1].uses[0]: a module cannot use itself');
    expect(wrong.ok ? '' : wrong.error).not.toContain('src/c.js');
  });
});
