import { test } from 'node:test';
import assert from 'node:assert/strict';

test('the index loads and re-exports only functions', async () => {
  const api = await import('./index.js');
  for (const [name, value] of Object.entries(api)) assert.equal(typeof value, 'function', name);
});
