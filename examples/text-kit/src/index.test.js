import { test } from 'node:test';
import assert from 'node:assert/strict';

test('the index loads and re-exports only functions', async () => {
  const kit = await import('./index.js');
  for (const [name, value] of Object.entries(kit)) assert.equal(typeof value, 'function', name);
});
