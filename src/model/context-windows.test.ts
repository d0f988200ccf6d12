import { describe, expect, it } from 'vitest';
import {
  contextWindowFor,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_OUTPUT_LIMIT,
  outputLimitFor,
  parseContextWindowOption,
  parseOutputLimitOption,
} from './context-windows.js';

describe('context windows', () => {
  it('knows the windows of known models, dated snapshots included, and defaults the rest', () => {
    expect(contextWindowFor('anthropic:claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(contextWindowFor('openai:gpt-5')).toBe(400_000);
    expect(contextWindowFor('openai-compatible:some-local-model')).toBe(DEFAULT_CONTEXT_WINDOW);
    expect(contextWindowFor('sim?seed=3')).toBe(200_000);
    expect(contextWindowFor('sim?seed=3&context=16000')).toBe(16_000);
  });

  it('takes the user\'s window for every model, or by model', () => {
    const all = parseContextWindowOption('32000');
    expect(all.ok && contextWindowFor('openai:gpt-5', all.overrides)).toBe(32_000);
    const byModel = parseContextWindowOption('openai:gpt-5=100000, sim=50000');
    expect(byModel.ok).toBe(true);
    if (!byModel.ok) return;
    expect(contextWindowFor('openai:gpt-5-2025-08-07', byModel.overrides)).toBe(100_000);
    expect(contextWindowFor('sim?context=16000', byModel.overrides)).toBe(50_000);
    expect(contextWindowFor('anthropic:claude-opus-4-5', byModel.overrides)).toBe(200_000);
  });

  it('says what is wrong with a bad --context-window', () => {
    expect(parseContextWindowOption('100')).toEqual({ ok: false, error: expect.stringContaining('too small: at least 2000 tokens') });
    expect(parseContextWindowOption('gpt5:lots')).toEqual({ ok: false, error: expect.stringContaining('is not understood at "gpt5:lots"') });
  });
});

describe('output limits', () => {
  it('knows the output limits of known models, dated snapshots included, and defaults the rest', () => {
    expect(outputLimitFor('anthropic:claude-sonnet-4-5-20250929')).toBe(64_000);
    expect(outputLimitFor('openai:gpt-5.2')).toBe(128_000);
    expect(outputLimitFor('openai:gpt-4.1')).toBe(32_768);
    expect(outputLimitFor('openai-compatible:qwen3-coder')).toBe(65_536);
    expect(outputLimitFor('openai-compatible:some-local-model')).toBe(DEFAULT_OUTPUT_LIMIT);
    expect(outputLimitFor('sim?seed=3&context=16000')).toBe(64_000);
  });

  it('takes the user\'s limit for every model, or by model', () => {
    const all = parseOutputLimitOption('8000');
    expect(all.ok && outputLimitFor('anthropic:claude-opus-4-5', all.overrides)).toBe(8_000);
    const byModel = parseOutputLimitOption('openai-compatible:qwen3-coder=32000,sim=2000');
    if (!byModel.ok) throw new Error(byModel.error);
    expect(outputLimitFor('openai-compatible:qwen3-coder', byModel.overrides)).toBe(32_000);
    expect(outputLimitFor('sim?seed=4', byModel.overrides)).toBe(2_000);
    expect(outputLimitFor('openai:gpt-5', byModel.overrides)).toBe(128_000);
  });

  it('says what is wrong with a bad --max-output-tokens, naming that flag', () => {
    expect(parseOutputLimitOption('100')).toEqual({ ok: false, error: expect.stringContaining('--max-output-tokens 100 is too small: at least 500 tokens') });
    expect(parseOutputLimitOption('sim=lots')).toEqual({ ok: false, error: expect.stringMatching(/^--max-output-tokens "sim=lots" is not understood at "sim=lots"\. Give a number/) });
  });
});
