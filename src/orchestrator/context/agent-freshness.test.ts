import { describe, expect, it } from 'vitest';
import { DEFAULT_FRESHNESS } from '../../events/run-settings.js';
import { DEFAULT_OUTPUT_LIMIT } from '../../model/context-windows.js';
import { defaultPromptSet } from '../prompts/prompt-set.js';
import { loopFreshness } from './agent-freshness.js';

describe('an agent\'s context policy', () => {
  it('has its model\'s window and output limit, or the user\'s for that model', () => {
    const prompts = defaultPromptSet();
    const freshness = { ...DEFAULT_FRESHNESS, outputLimits: { all: null, byModel: { sim: 3_000 } } };
    expect(loopFreshness(freshness, 'planner', 'anthropic:claude-sonnet-4-5', prompts).context).toMatchObject({ windowTokens: 200_000, outputTokens: 64_000 });
    expect(loopFreshness(freshness, 'worker', 'sim?seed=2', prompts).context).toMatchObject({ windowTokens: 200_000, outputTokens: 3_000 });
    expect(loopFreshness(DEFAULT_FRESHNESS, 'worker', 'openai-compatible:local', prompts).context.outputTokens).toBe(DEFAULT_OUTPUT_LIMIT);
  });
});
