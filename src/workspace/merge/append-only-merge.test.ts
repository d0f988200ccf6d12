import { describe, expect, it } from 'vitest';
import { mergeAppendOnly } from './append-only-merge.js';

describe('mergeAppendOnly', () => {
  const base = "export * from './a.js';\n";

  it("keeps the trunk's appended lines first, then the workspace's", () => {
    const main = `${base}export * from './b.js';\n`;
    const workspace = `${base}export * from './c.js';\n`;
    expect(mergeAppendOnly(base, main, workspace)).toBe(`${base}export * from './b.js';\nexport * from './c.js';\n`);
  });

  it('keeps every line of the workspace block, even lines the trunk also appended', () => {
    const main = 'def f():\n    return 1\n';
    const workspace = 'def g():\n    return 1\n';
    expect(mergeAppendOnly('', main, workspace)).toBe('def f():\n    return 1\ndef g():\n    return 1\n');
    const braces = mergeAppendOnly(base, `${base}function a() {\n}\n\n`, `${base}function b() {\n}\n\n`);
    expect(braces).toBe(`${base}function a() {\n}\n\nfunction b() {\n}\n\n`);
  });

  it('does not repeat a block the trunk already holds, or the start of it the trunk added', () => {
    expect(mergeAppendOnly(base, `${base}x\ny\nz\n`, `${base}y\nz\n`)).toBe(`${base}x\ny\nz\n`);
    expect(mergeAppendOnly(base, `${base}x\n`, `${base}x\ny\n`)).toBe(`${base}x\ny\n`);
  });

  it('takes an identical change as it is, even when it is not an append', () => {
    expect(mergeAppendOnly('a\nb\n', 'a\nB\n', 'a\nB\n')).toBe('a\nB\n');
  });

  it('works from an empty file and adds a missing final newline', () => {
    expect(mergeAppendOnly('', 'one', 'two\n')).toBe('one\ntwo\n');
  });

  it('refuses a side that changed or removed an existing line', () => {
    expect(mergeAppendOnly(base, "export * from './A.js';\nx\n", `${base}y\n`)).toBeNull();
    expect(mergeAppendOnly(`${base}old\n`, `${base}old\nnew\n`, base)).toBeNull();
  });

  it('refuses when the base does not end in a newline (its last line itself may have been extended)', () => {
    expect(mergeAppendOnly('a', 'ab\n', 'ac\n')).toBeNull();
  });

  it('refuses binary content', () => {
    expect(mergeAppendOnly('a\n', 'a\n\0b', 'a\nc\n')).toBeNull();
  });
});
