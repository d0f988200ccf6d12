import { describe, expect, it } from 'vitest';
import { mergeJsonObjects } from './manifest-merge.js';

const BASE = { name: 'demo', version: '1.0.0', scripts: { test: 'node --test' }, dependencies: { 'is-number': '7.0.0' } };

function json(value: unknown, indent: string | number = 2): string {
  return `${JSON.stringify(value, null, indent)}\n`;
}

describe('mergeJsonObjects', () => {
  it('keeps the packages both sides added, sorted as npm keeps them', () => {
    const main = { ...BASE, dependencies: { ...BASE.dependencies, 'kind-of': '6.0.3' } };
    const workspace = { ...BASE, dependencies: { 'is-number': '7.0.0', 'is-odd': '3.0.1' } };
    const merged = mergeJsonObjects(json(BASE), json(main), json(workspace));
    expect(merged).toBe(json({ ...BASE, dependencies: { 'is-number': '7.0.0', 'is-odd': '3.0.1', 'kind-of': '6.0.3' } }));
    expect(Object.keys(JSON.parse(merged ?? '{}') as object)).toEqual(['name', 'version', 'scripts', 'dependencies']);
  });

  it('merges different keys of different objects, adds a field only one side has, and drops what one side removed', () => {
    const main = { ...BASE, scripts: { ...BASE.scripts, lint: 'eslint .' }, devDependencies: { vitest: '4.1.12' } };
    const { version: _dropped, ...withoutVersion } = BASE;
    const workspace = { ...withoutVersion, dependencies: { ...BASE.dependencies, 'is-odd': '3.0.1' } };
    const merged = JSON.parse(mergeJsonObjects(json(BASE), json(main), json(workspace)) ?? 'null') as Record<string, unknown>;
    expect(merged).toEqual({ name: 'demo', scripts: { test: 'node --test', lint: 'eslint .' }, dependencies: { 'is-number': '7.0.0', 'is-odd': '3.0.1' }, devDependencies: { vitest: '4.1.12' } });
  });

  it('keeps an order that was not sorted, the workspace’s new keys after main’s', () => {
    const base = { scripts: { test: 'a', build: 'b' } };
    const merged = mergeJsonObjects(json(base), json({ scripts: { test: 'a', build: 'b', lint: 'c' } }), json({ scripts: { test: 'a', build: 'b', check: 'd' } }));
    expect(Object.keys((JSON.parse(merged ?? '{}') as { scripts: object }).scripts)).toEqual(['test', 'build', 'lint', 'check']);
  });

  it('is a conflict when both sides give one key different values, or change one array differently', () => {
    expect(mergeJsonObjects(json(BASE), json({ ...BASE, version: '1.1.0' }), json({ ...BASE, version: '2.0.0' }))).toBeNull();
    const withFiles = { ...BASE, files: ['src'] };
    expect(mergeJsonObjects(json(withFiles), json({ ...BASE, files: ['src', 'bin'] }), json({ ...BASE, files: ['src', 'lib'] }))).toBeNull();
    const main = { ...BASE, dependencies: { 'is-number': '7.0.1' } };
    const workspace = { ...BASE, dependencies: { 'is-number': '6.0.0' } };
    expect(mergeJsonObjects(json(BASE), json(main), json(workspace))).toBeNull();
  });

  it('writes with main’s indentation and final newline, and refuses what is not a JSON object', () => {
    const main = { ...BASE, private: true };
    const merged = mergeJsonObjects(json(BASE), JSON.stringify(main, null, '\t'), json({ ...BASE, license: 'MIT' }));
    expect(merged).toBe(JSON.stringify({ ...main, license: 'MIT' }, null, '\t'));
    expect(mergeJsonObjects(json(BASE), '{ "name": ', json(BASE))).toBeNull();
    expect(mergeJsonObjects('[]', json(BASE), json(BASE))).toBeNull();
  });
});
