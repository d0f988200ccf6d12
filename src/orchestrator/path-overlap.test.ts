import { describe, expect, it } from 'vitest';
import { normalizeRepoPath, PathIndex } from './path-overlap.js';

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

describe('PathIndex', () => {
  const index = new PathIndex<'declared' | 'touched'>();
  index.add('task-a', 'src/text/', 'declared');
  index.add('task-b', 'src/text/pad.js', 'touched');
  index.add('task-c', 'src/index.js', 'declared');
  index.add('task-d', 'src/textile.js', 'declared');

  it('finds the same path and the folders above it', () => {
    expect(index.atOrAbove('src/text/pad.js').map((entry) => entry.owner).sort()).toEqual(['task-a', 'task-b']);
    expect(index.atOrAbove('src/index.js')).toEqual([{ owner: 'task-c', path: 'src/index.js', source: 'declared' }]);
  });

  it('finds the paths below a folder, compared by whole segments', () => {
    expect(index.below('src/text')).toEqual([{ owner: 'task-b', path: 'src/text/pad.js', source: 'touched' }]);
    expect(index.below('src/').map((entry) => entry.owner).sort()).toEqual(['task-a', 'task-b', 'task-c', 'task-d']);
    expect(index.atOrAbove('src/text')).toEqual([{ owner: 'task-a', path: 'src/text/', source: 'declared' }]);
    expect(index.below('src/text/pad.js')).toEqual([]);
    expect(index.atOrAbove('docs/readme.md')).toEqual([]);
  });
});
