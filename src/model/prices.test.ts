import { describe, expect, it } from 'vitest';
import { costUsd, priceFor } from './prices.js';
import { modelPrice } from './registry.js';

describe('priceFor', () => {
  it('knows the listed models, dated snapshots included', () => {
    expect(priceFor('anthropic', 'claude-opus-4-5')).toMatchObject({ inputPerMTok: 5, outputPerMTok: 25 });
    expect(priceFor('anthropic', 'claude-sonnet-4-5-20250929')).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15 });
    expect(priceFor('anthropic', 'claude-haiku-4-5')).toMatchObject({ inputPerMTok: 1, outputPerMTok: 5 });
    expect(priceFor('openai', 'gpt-5')).toMatchObject({ inputPerMTok: 1.25, outputPerMTok: 10 });
    expect(priceFor('openai', 'gpt-5-2025-08-07')).toMatchObject({ inputPerMTok: 1.25 });
    expect(priceFor('openai', 'gpt-5.1')).toMatchObject({ inputPerMTok: 1.25, outputPerMTok: 10 });
    expect(priceFor('openai', 'gpt-5-mini')).toMatchObject({ inputPerMTok: 0.25, outputPerMTok: 2 });
  });

  it('prices the sim at nothing, and lets a price table override or add prices', () => {
    expect(priceFor('sim', '')).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
    const overrides = { sim: { inputPerMTok: 2, outputPerMTok: 8 }, 'openai:gpt-5': { inputPerMTok: 1, outputPerMTok: 9 }, 'openai-compatible:qwen3-coder': { inputPerMTok: 0.2, outputPerMTok: 0.6 } };
    expect(priceFor('sim', '', overrides)).toEqual({ inputPerMTok: 2, outputPerMTok: 8 });
    expect(priceFor('openai', 'gpt-5-2025-08-07', overrides)).toEqual({ inputPerMTok: 1, outputPerMTok: 9 });
    expect(priceFor('openai-compatible', 'qwen3-coder', overrides)).toEqual({ inputPerMTok: 0.2, outputPerMTok: 0.6 });
    expect(priceFor('anthropic', 'claude-opus-4-5', overrides)).toMatchObject({ inputPerMTok: 5 });
    expect(modelPrice('sim?seed=3&latency=5', overrides)).toEqual({ inputPerMTok: 2, outputPerMTok: 8 });
    expect(modelPrice('openai-compatible:sim')).toBeNull();
  });

  it('returns null rather than guessing', () => {
    expect(priceFor('openai', 'gpt-5-turbo-imaginary')).toBeNull();
    expect(priceFor('openai', 'claude-sonnet-4-5')).toBeNull();
    expect(priceFor('openai-compatible', 'qwen3-coder')).toBeNull();
  });
});

describe('costUsd', () => {
  it('bills cached input at the cached price and the rest at list price', () => {
    const usage = { inputTokens: 2_000_000, outputTokens: 500_000, cachedInputTokens: 1_000_000 };
    expect(costUsd(usage, { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 })).toBeCloseTo(3 + 0.3 + 7.5, 10);
    expect(costUsd(usage, { inputPerMTok: 3, outputPerMTok: 15 })).toBeCloseTo(6 + 7.5, 10);
  });

  it('bills cache writes at the write price, apart from reads and plain input', () => {
    const usage = { inputTokens: 3_000_000, outputTokens: 0, cachedInputTokens: 1_000_000, cacheWriteTokens: 1_000_000 };
    const sonnet = priceFor('anthropic', 'claude-sonnet-4-5');
    // 1M plain at 3, 1M read at 0.3, 1M written at 3.75.
    expect(costUsd(usage, sonnet)).toBeCloseTo(3 + 0.3 + 3.75, 10);
    // Without a write price a write costs plain input.
    expect(costUsd(usage, { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 })).toBeCloseTo(3 + 0.3 + 3, 10);
  });

  it('is null without a price', () => {
    expect(costUsd({ inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, null)).toBeNull();
    expect(costUsd({ inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, undefined)).toBeNull();
  });
});
