import { describe, expect, it } from 'vitest';
import { newId, newShortId } from './ids.js';

describe('ids', () => {
  it('sort by creation time', () => {
    const earlier = newId(1_700_000_000_000);
    const later = newId(1_700_000_000_001);
    expect(earlier < later).toBe(true);
    expect(earlier).toMatch(/^[0-9a-hjkmnp-tv-z]{22}$/);
  });

  it('stay unique across many draws, past several refills of the random pool', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId(1_700_000_000_000)));
    expect(ids.size).toBe(20_000);
  });

  it('short ids carry their prefix', () => {
    expect(newShortId('worker')).toMatch(/^worker-[0-9a-hjkmnp-tv-z]{8}$/);
  });
});
