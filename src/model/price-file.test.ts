import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePriceTable, readPriceFile } from './price-file.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colony-prices-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the price file', () => {
  it('reads a table of prices by model key', () => {
    const path = join(dir, 'prices.json');
    writeFileSync(path, JSON.stringify({ 'openai:gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 }, sim: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 } }));
    expect(readPriceFile(path)).toEqual({
      ok: true,
      prices: { 'openai:gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10 }, sim: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 } },
    });
  });

  it('says what is wrong and where, with an example of the right form', () => {
    const wrongNumber = parsePriceTable({ 'openai:gpt-5': { inputPerMTok: 'ten', outputPerMTok: 10 } }, 'p.json');
    expect(wrongNumber).toMatchObject({ ok: false, error: expect.stringContaining('"openai:gpt-5"."inputPerMTok": expected a number of US dollars per million tokens') });
    expect(wrongNumber).toMatchObject({ error: expect.stringContaining('Write it like { "openai:gpt-5": { "inputPerMTok": 1.25, "outputPerMTok": 10 } }') });
    expect(parsePriceTable({ 'GPT 5': { inputPerMTok: 1, outputPerMTok: 1 } }, 'p.json')).toMatchObject({
      error: expect.stringContaining('"GPT 5": is not a model key'),
    });
    expect(parsePriceTable({ sim: { inputPerMTok: -1, outputPerMTok: 2 } }, 'p.json')).toMatchObject({ error: expect.stringContaining('"sim"."inputPerMTok": expected 0 or more') });
    expect(parsePriceTable({ sim: { inputPerMTok: 1 } }, 'p.json')).toMatchObject({ error: expect.stringContaining('"sim"."outputPerMTok"') });
    expect(parsePriceTable({ sim: { inputPerMTok: 1, outputPerMTok: 1, outputPerMtok: 2 } }, 'p.json')).toMatchObject({
      error: expect.stringContaining('unknown field "outputPerMtok"'),
    });
    expect(parsePriceTable([1], 'p.json')).toMatchObject({ error: expect.stringContaining('the file: expected an object from model keys to prices') });
  });

  it('refuses a file that is missing or not JSON', () => {
    expect(readPriceFile(join(dir, 'missing.json'))).toMatchObject({ ok: false, error: expect.stringContaining('cannot read the price file') });
    const path = join(dir, 'broken.json');
    writeFileSync(path, '{ "sim": ');
    expect(readPriceFile(path)).toMatchObject({ ok: false, error: expect.stringContaining('is not JSON') });
  });
});
