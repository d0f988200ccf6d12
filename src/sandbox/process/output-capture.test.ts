import { describe, expect, it } from 'vitest';
import { HeadTailCapture, renderBytesAsText } from './output-capture.js';

function capture(maxBytes: number, chunks: readonly (string | Buffer)[]): HeadTailCapture {
  const result = new HeadTailCapture(maxBytes);
  for (const chunk of chunks) result.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return result;
}

describe('HeadTailCapture', () => {
  it('keeps everything within the budget, across chunks', () => {
    const result = capture(10, ['abc', 'defg', 'hij']);
    expect(result.truncated).toBe(false);
    expect(result.totalBytes).toBe(10);
    expect(result.render()).toBe('abcdefghij');
  });

  it('keeps the head and the newest tail when many small chunks overflow', () => {
    const chunks = Array.from({ length: 100 }, (_, index) => `${index % 10}`);
    const result = capture(10, chunks);
    expect(result.truncated).toBe(true);
    expect(result.totalBytes).toBe(100);
    expect(result.render()).toBe('01234\n[... 90 bytes omitted ...]\n56789');
  });

  it('drops a multi-byte character cut by the head or tail edge whole, not as garbage', () => {
    // 'é' is two bytes. With 3 bytes each for head and tail, both edges fall inside one.
    const cut = capture(6, ['aaéé', 'xxxxxxxxxx', 'é', 'bb']).render();
    expect(cut).toBe('aa\n[... 16 bytes omitted ...]\nbb');
    // With 4 bytes each, both edges fall between characters and nothing is dropped.
    const whole = capture(8, ['aaéé', 'xxxxxxxxxx', 'é', 'bb']).render();
    expect(whole).toBe('aaé\n[... 12 bytes omitted ...]\nébb');
  });

  it('refuses a budget too small to hold a head and a tail', () => {
    expect(() => new HeadTailCapture(1)).toThrow(RangeError);
  });
});

describe('renderBytesAsText', () => {
  it('turns carriage returns into line breaks and strips terminal escapes', () => {
    expect(renderBytesAsText(Buffer.from('a\r\nb\rc\u001b[1;32mgreen\u001b[0m\u001b]0;title\u0007\n'))).toBe(
      'a\nb\ncgreen\n',
    );
  });

  it('replaces NUL, other control bytes and invalid UTF-8, keeping tabs and newlines', () => {
    expect(renderBytesAsText(Buffer.from([0x61, 0x00, 0x09, 0x07, 0xc3, 0x28, 0x0a]))).toBe('a\uFFFD\t\uFFFD\uFFFD(\n');
  });
});
