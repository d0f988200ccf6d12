import type { Usage } from './chat-model.js';

/** US dollars per million tokens. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  /** Input tokens read from the provider's prompt cache; billed as plain input when absent. */
  readonly cachedInputPerMTok?: number;
}

/**
 * List prices we are sure of, per provider and model id. A model missing here costs `null`
 * (unknown) rather than a guess.
 */
const KNOWN_PRICES: Readonly<Record<string, Readonly<Record<string, ModelPrice>>>> = {
  anthropic: {
    'claude-opus-4-5': { inputPerMTok: 5, outputPerMTok: 25, cachedInputPerMTok: 0.5 },
    'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 },
    'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5, cachedInputPerMTok: 0.1 },
  },
  openai: {
    'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
    'gpt-5.1': { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
    'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cachedInputPerMTok: 0.025 },
  },
};

/** Dated snapshots (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) cost what their model costs. */
const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The price of `modelId` at `provider` (`openai`, `anthropic`), or null when it is not known. */
export function priceFor(provider: string, modelId: string): ModelPrice | null {
  const prices = KNOWN_PRICES[provider];
  if (prices === undefined) return null;
  return prices[modelId] ?? prices[modelId.replace(DATE_SUFFIX, '')] ?? null;
}

/** What `usage` costs at `price`, in US dollars; null when the price is not known. */
export function costUsd(usage: Usage, price: ModelPrice | null | undefined): number | null {
  if (price === null || price === undefined) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  return (uncached * price.inputPerMTok + cached * cachedPrice + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}
