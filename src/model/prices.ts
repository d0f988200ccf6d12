import type { Usage } from './chat-model.js';

/** US dollars per million tokens. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  /** Input tokens read from the provider's prompt cache; billed as plain input when absent. */
  readonly cachedInputPerMTok?: number | undefined;
  /** Input tokens written to the provider's prompt cache; billed as plain input when absent. */
  readonly cacheWriteInputPerMTok?: number | undefined;
}

/**
 * Prices by model key: `provider:model` (`openai:gpt-5`, `openai-compatible:qwen3-coder`), or
 * the provider alone for a provider with no model name (`sim`).
 */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices we are sure of. A model missing here costs `null` (unknown) rather than a
 * guess; `--prices FILE.json` adds models or overrides these.
 */
export const KNOWN_PRICES: PriceTable = {
  // Anthropic bills a write to its five-minute cache at 1.25 times the input price, a read at a tenth.
  'anthropic:claude-opus-4-5': { inputPerMTok: 5, outputPerMTok: 25, cachedInputPerMTok: 0.5, cacheWriteInputPerMTok: 6.25 },
  'anthropic:claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWriteInputPerMTok: 3.75 },
  'anthropic:claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5, cachedInputPerMTok: 0.1, cacheWriteInputPerMTok: 1.25 },
  'openai:gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  'openai:gpt-5.1': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  'openai:gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cachedInputPerMTok: 0.025 },
  // The simulated model is free: its calls cost exactly nothing, which is known, not unknown.
  // A price file can give it a price, so spending limits in dollars can be tried on it.
  sim: { inputPerMTok: 0, outputPerMTok: 0 },
};

/** Dated snapshots (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) cost what their model costs. */
const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The key a model's price is filed under: `provider:model`, or `provider` when it has no model name. */
export function priceKey(provider: string, modelId: string): string {
  return modelId === '' ? provider : `${provider}:${modelId}`;
}

/**
 * The price of `modelId` at `provider` (`openai`, `anthropic`, `sim`), or null when it is not
 * known. `overrides` (the user's price file) are consulted before the known prices.
 */
export function priceFor(provider: string, modelId: string, overrides: PriceTable = {}): ModelPrice | null {
  const exact = priceKey(provider, modelId);
  const undated = priceKey(provider, modelId.replace(DATE_SUFFIX, ''));
  return overrides[exact] ?? overrides[undated] ?? KNOWN_PRICES[exact] ?? KNOWN_PRICES[undated] ?? null;
}

/** What `usage` costs at `price`, in US dollars; null when the price is not known. */
export function costUsd(usage: Usage, price: ModelPrice | null | undefined): number | null {
  if (price === null || price === undefined) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - cached);
  const uncached = usage.inputTokens - cached - written;
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  const writePrice = price.cacheWriteInputPerMTok ?? price.inputPerMTok;
  return (uncached * price.inputPerMTok + cached * cachedPrice + written * writePrice + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}
