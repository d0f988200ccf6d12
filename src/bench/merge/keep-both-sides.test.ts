import { describe, expect, it } from 'vitest';
import { keepBothSides } from './keep-both-sides.js';

describe('keepBothSides', () => {
  it("keeps the trunk's lines, then the workspace's, and drops the markers", () => {
    const text = 'head\n<<<<<<< HEAD\nours 1\nours 2\n=======\ntheirs\n>>>>>>> 1a2b3c (Append)\ntail\n';
    expect(keepBothSides(text)).toBe('head\nours 1\nours 2\ntheirs\ntail\n');
  });

  it('drops the common base of a diff3-style conflict and resolves every conflict in the file', () => {
    const text = ['<<<<<<< main', 'a', '||||||| base', 'old', '=======', 'b', '>>>>>>> side', 'middle', '<<<<<<< main', 'c', '=======', 'd', '>>>>>>> side', ''].join('\n');
    expect(keepBothSides(text)).toBe('a\nb\nmiddle\nc\nd\n');
  });

  it('leaves lines that only look like markers, and text without conflicts, alone', () => {
    const text = 'Title\n========\n<<<<<<<<< not a marker\nlast line without newline';
    expect(keepBothSides(text)).toBe(text);
  });

  it('handles a conflict at the very end of a file without a final newline', () => {
    expect(keepBothSides('<<<<<<< a\nx\n=======\ny\n>>>>>>> b')).toBe('x\ny\n');
  });
});
