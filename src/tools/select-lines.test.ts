import { describe, expect, it } from 'vitest';
import { selectLines } from './select-lines.js';

async function* chunksOf(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

describe('selectLines', () => {
  it('joins lines split across chunks and counts a last line without newline', async () => {
    const selection = await selectLines(chunksOf('al', 'pha\nbe', 'ta\ngam', 'ma'), 2, 5, 1_000);
    expect(selection.bytes.toString()).toBe('beta\ngamma');
    expect(selection).toMatchObject({ lastLine: 3, totalLines: 3, cutLine: null });
  });

  it('keeps multi-byte characters whole when a chunk boundary splits them', async () => {
    const bytes = Buffer.from('héllo\nwörld\n');
    async function* split(): AsyncGenerator<Buffer> {
      yield bytes.subarray(0, 2);
      yield bytes.subarray(2, 9);
      yield bytes.subarray(9);
    }
    const selection = await selectLines(split(), 1, 10, 1_000);
    expect(selection.bytes.toString('utf8')).toBe('héllo\nwörld\n');
    expect(selection.totalLines).toBe(2);
  });

  it('stops before the line that would pass the byte budget', async () => {
    const selection = await selectLines(chunksOf('aaaa\nbbbb\ncccc\n'), 1, 10, 12);
    expect(selection.bytes.toString()).toBe('aaaa\nbbbb\n');
    expect(selection).toMatchObject({ lastLine: 2, totalLines: 3, cutLine: null });
  });

  it('cuts a first line that is alone over the budget, without holding all of it', async () => {
    const selection = await selectLines(chunksOf('x'.repeat(10), 'x'.repeat(10), '\nnext\n'), 1, 10, 8);
    expect(selection.bytes.toString()).toBe('x'.repeat(8));
    expect(selection).toMatchObject({ lastLine: 0, totalLines: 2, cutLine: { number: 1, bytes: 21, shownBytes: 8 } });
  });

  it('sees zero lines in an empty stream', async () => {
    const selection = await selectLines(chunksOf(), 1, 10, 100);
    expect(selection).toMatchObject({ lastLine: 0, totalLines: 0 });
    expect(selection.bytes.length).toBe(0);
  });
});
