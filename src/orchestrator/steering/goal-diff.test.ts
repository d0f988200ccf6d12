import { describe, expect, it } from 'vitest';
import { goalChangedMessage } from './goal-change-message.js';
import { diffLines } from './goal-diff.js';

describe('diffLines', () => {
  it('lists the lines removed and added, in order, around what stayed', () => {
    const before = '# Goal\n\n- build pad\n- build case\n- build slug\n';
    const after = '# Goal\n\n- build pad\n- build kebab case\n- build slug\n- build trim\n';
    expect(diffLines(before, after)).toEqual({ removed: ['- build case'], added: ['- build kebab case', '- build trim'] });
  });

  it('keeps a line that moved among others as one removal and one addition', () => {
    expect(diffLines('a\nb\nc\nd', 'a\nc\nb\nd')).toEqual({ removed: ['b'], added: ['b'] });
  });

  it('counts repeated lines each time, and sees no change in line endings or a final newline', () => {
    expect(diffLines('x\nx\n', 'x\nx\nx\n')).toEqual({ removed: [], added: ['x'] });
    expect(diffLines('a\r\nb\r\n', 'a\nb')).toEqual({ removed: [], added: [] });
    expect(diffLines('', 'first\n')).toEqual({ removed: [], added: ['first'] });
    expect(diffLines('gone\n', '')).toEqual({ removed: ['gone'], added: [] });
  });

  it('compares a rewrite too large to compare exactly as two bags of lines', () => {
    const before = Array.from({ length: 1_500 }, (_, index) => `old ${index}`).join('\n');
    const after = Array.from({ length: 1_500 }, (_, index) => (index % 2 === 0 ? `old ${index}` : `new ${index}`)).reverse().join('\n');
    const diff = diffLines(before, after);
    expect(diff.added).toHaveLength(750);
    expect(diff.removed).toHaveLength(750);
    expect(diff.added.every((line) => line.startsWith('new '))).toBe(true);
    expect(diff.removed.every((line) => line.startsWith('old '))).toBe(true);
  });
});

describe('goalChangedMessage', () => {
  it('names the file, counts the lines, shows them and gives the whole new goal', () => {
    const message = goalChangedMessage('/work/GOAL.md', { removed: ['- build case'], added: ['- build kebab case'] }, '# Goal\n\n- build kebab case\n');
    expect(message).toMatch(/^The goal file \/work\/GOAL\.md was edited while you work: 1 line\(s\) added, 1 removed\./);
    expect(message).toContain('Removed lines (1):\n- - build case\nAdded lines (1):\n+ - build kebab case');
    expect(message).toContain('----- the goal, as it is now -----\n# Goal\n\n- build kebab case\n----- end of the goal -----');
  });

  it('caps the changed lines, each line, and the goal, and says where the rest is', () => {
    const added = Array.from({ length: 130 }, (_, index) => `line ${index} ${'x'.repeat(index === 0 ? 500 : 0)}`);
    const goal = 'g'.repeat(40_000);
    const message = goalChangedMessage('/work/GOAL.md', { removed: [], added }, goal);
    expect(message).toContain('Added lines (130):');
    expect(message).toContain('+ line 79 ');
    expect(message).not.toContain('+ line 80 ');
    expect(message).toContain('… and 50 more');
    expect(message).toContain(`+ line 0 ${'x'.repeat(293)}…`);
    expect(message).not.toContain('Removed lines');
    expect(message).toContain('----- the goal, as it is now (its first 32000 characters) -----');
    expect(message).toContain('----- the goal goes on for 8000 more characters, in /work/GOAL.md -----');
    expect(message.length).toBeLessThan(36_000);
  });
});

describe('the goal-change message', () => {
  it('carries a goal with dollar signs and placeholder-like text exactly as written', () => {
    const goal = 'Run `echo $$ $& $1` and keep {{GOAL}} literally.';
    const message = goalChangedMessage('/goals/GOAL.md', { added: [goal], removed: [] }, goal);
    expect(message).toContain('+ Run `echo $$ $& $1` and keep {{GOAL}} literally.');
    expect(message.split(goal).length).toBeGreaterThanOrEqual(3);
  });
});
