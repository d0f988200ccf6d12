import { describe, expect, it } from 'vitest';
import { count } from './text-table.js';

describe('count', () => {
  it('groups the digits of a whole number in threes, as en-US writes them', () => {
    for (const value of [0, 7, 999, 1000, 12_345, 999_999, 1_000_000, 342_149, 1_234_567_890, -1234]) {
      expect(count(value)).toBe(value.toLocaleString('en-US'));
    }
  });
});
