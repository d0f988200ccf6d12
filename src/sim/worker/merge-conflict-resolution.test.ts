import { describe, expect, it } from 'vitest';
import { hasConflictMarkers, resolveConflicts, strategyFor } from './merge-conflict-resolution.js';

const index = [
  '// the index',
  "export * from './a.js';",
  '<<<<<<< HEAD',
  "export * from './b.js';",
  "export * from './c.js';",
  '=======',
  "export * from './c.js';",
  "export * from './d.js';",
  '>>>>>>> worker',
  '',
].join('\n');

describe('merge conflict resolution', () => {
  it('keeps the union of both sides for the index, main first, without duplicates', () => {
    expect(hasConflictMarkers(index)).toBe(true);
    expect(strategyFor('src/index.js', index, 'src/index.js')).toBe('union-of-lines');
    expect(resolveConflicts(index, 'union-of-lines')).toBe(
      ['// the index', "export * from './a.js';", "export * from './b.js';", "export * from './c.js';", "export * from './d.js';", ''].join('\n'),
    );
  });

  it('does not repeat a line that already stands outside the hunk', () => {
    const text = ["export * from './a.js';", '<<<<<<< main', "export * from './a.js';", '=======', "export * from './b.js';", '>>>>>>> ours'].join('\n');
    expect(resolveConflicts(text, 'union-of-lines')).toBe("export * from './a.js';\nexport * from './b.js';");
  });

  it('treats any file of one-line entries like the index, and code as this worker\'s side', () => {
    expect(strategyFor('src/all.js', index, 'src/index.js')).toBe('union-of-lines');
    const code = ['export function f() {', '<<<<<<< main', '  return 1;', '=======', '  return 2;', '>>>>>>> ours', '}'].join('\n');
    expect(strategyFor('src/f.js', code, 'src/index.js')).toBe('this-worker-side');
    expect(resolveConflicts(code, 'this-worker-side')).toBe('export function f() {\n  return 2;\n}');
  });

  it('drops a diff3 base section', () => {
    const text = ['<<<<<<< main', 'm', '||||||| base', 'b', '=======', 'o', '>>>>>>> ours'].join('\n');
    expect(resolveConflicts(text, 'union-of-lines')).toBe('m\no');
    expect(resolveConflicts(text, 'this-worker-side')).toBe('o');
  });

  it('sees no markers in a clean file', () => {
    expect(hasConflictMarkers("export * from './a.js';\n// ======= is just a comment here\n")).toBe(false);
  });
});
