import { describe, expect, it } from 'vitest';
import { ancestorsOf, normalizeRepoPath, pathsMeet } from './path-overlap.js';

describe('normalizeRepoPath', () => {
  it('spells a path inside the repository one way, keeping a folder’s trailing slash', () => {
    expect(normalizeRepoPath('src/text/pad.js')).toBe('src/text/pad.js');
    expect(normalizeRepoPath('./src//text/../text/pad.js')).toBe('src/text/pad.js');
    expect(normalizeRepoPath(' src/text/ ')).toBe('src/text/');
    expect(normalizeRepoPath('src\\text\\pad.js')).toBe('src/text/pad.js');
  });

  it('refuses what is not a path inside the repository', () => {
    for (const path of ['', '  ', '.', './', '..', '../x.js', 'src/../../x.js', '/etc/passwd']) {
      expect(normalizeRepoPath(path)).toBeNull();
    }
  });
});

describe('pathsMeet', () => {
  it('meets the same path and a folder over it, in either order, by whole segments', () => {
    expect(pathsMeet('src/text/pad.js', 'src/text/pad.js')).toBe(true);
    expect(pathsMeet('src/text/', 'src/text/pad.js')).toBe(true);
    expect(pathsMeet('src/text/pad.js', 'src/text')).toBe(true);
    expect(pathsMeet('src/text/', 'src/text')).toBe(true);
    expect(pathsMeet('src/text/', 'src/textile.js')).toBe(false);
    expect(pathsMeet('src/text/pad.js', 'src/text/case.js')).toBe(false);
    expect(pathsMeet('src/index.js', 'docs/index.js')).toBe(false);
  });

  it('lists the folders above a path, outermost first', () => {
    expect(ancestorsOf('src/text/pad.js')).toEqual(['src', 'src/text']);
    expect(ancestorsOf('README.md')).toEqual([]);
  });
});
