import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { PriceTable } from './prices.js';
import { errorMessage } from '../errors/error-message.js';

const dollarsPerMTok = z.number({ error: 'expected a number of US dollars per million tokens' }).nonnegative({ error: 'expected 0 or more' });

const priceSchema = z.strictObject(
  {
    inputPerMTok: dollarsPerMTok,
    outputPerMTok: dollarsPerMTok,
    cachedInputPerMTok: dollarsPerMTok.optional(),
    cacheWriteInputPerMTok: dollarsPerMTok.optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}: a price has inputPerMTok, outputPerMTok and optionally cachedInputPerMTok and cacheWriteInputPerMTok`
        : 'expected an object like { "inputPerMTok": 1.25, "outputPerMTok": 10 }',
  },
);

/** `provider:model` as in a model spec (`openai:gpt-5`), or a provider alone (`sim`). */
const MODEL_KEY = /^[a-z][a-z0-9-]*(:[^?\s]+)?$/;

const priceTableSchema = z.record(
  z.string().regex(MODEL_KEY, { error: 'expected a model key like "openai:gpt-5" or "sim"' }),
  priceSchema,
  {
    error: (issue) =>
      issue.code === 'invalid_key' ? 'is not a model key: write "provider:model", like "openai:gpt-5", or "sim"' : 'expected an object from model keys to prices',
  },
);

export type PriceFileResult = { readonly ok: true; readonly prices: PriceTable } | { readonly ok: false; readonly error: string };

const EXAMPLE = '{ "openai:gpt-5": { "inputPerMTok": 1.25, "outputPerMTok": 10 } }';

/** Reads the price table the user gives with `--prices FILE.json`; every problem comes back as a message that says what to fix. */
export function readPriceFile(path: string): PriceFileResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, error: `cannot read the price file ${path}: ${errorMessage(error)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `the price file ${path} is not JSON (${errorMessage(error)}); write it like ${EXAMPLE}` };
  }
  return parsePriceTable(json, path);
}

/** Checks a parsed price file; `source` names it in messages. */
export function parsePriceTable(json: unknown, source: string): PriceFileResult {
  const parsed = priceTableSchema.safeParse(json);
  if (parsed.success) return { ok: true, prices: parsed.data };
  const problems = parsed.error.issues.slice(0, 5).map((issue) => {
    const where = issue.path.length === 0 ? 'the file' : issue.path.map((part) => JSON.stringify(String(part))).join('.');
    return `${where}: ${issue.message}`;
  });
  return { ok: false, error: `the price file ${source} is not a valid price table: ${problems.join('; ')}. Write it like ${EXAMPLE}` };
}
