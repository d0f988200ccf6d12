import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { byteSize } from './command-context.js';

describe('byteSize', () => {
  it('reads bytes and K, M, G, T as powers of 1024, with or without B or iB', () => {
    expect(byteSize('4096')).toBe(4096);
    expect(byteSize('500M')).toBe(500 * 2 ** 20);
    expect(byteSize('2G')).toBe(2 * 2 ** 30);
    expect(byteSize('1.5g')).toBe(1.5 * 2 ** 30);
    expect(byteSize('10GiB')).toBe(10 * 2 ** 30);
    expect(byteSize('1 TB')).toBe(2 ** 40);
  });

  it('refuses what is not a positive size, saying what it expected', () => {
    for (const bad of ['', '0', '-1G', 'lots', '2X', 'G']) {
      expect(() => byteSize(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => byteSize('lots')).toThrow(/expected a size such as 500M or 2G, got "lots"/);
  });
});
