import type { LanguageModelV3Prompt, SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { PromptCacheHint } from '../chat-model.js';

/**
 * How a provider's prompt cache is asked for. `breakpoints`: Anthropic, which caches only up to
 * the blocks marked `cache_control`. `key`: OpenAI, which caches any repeated prefix by itself
 * and keeps requests with one `prompt_cache_key` together. `prefix`: a server that caches
 * repeated prefixes by itself, if at all, and may refuse fields it does not know (most
 * OpenAI-compatible servers): it is told nothing, and gets what every provider needs, a prefix
 * that stays the same byte for byte from one call of an agent to the next.
 */
export type PromptCacheStyle = 'breakpoints' | 'key' | 'prefix';

const EPHEMERAL = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

/**
 * The prompt with Anthropic's breakpoints marked: the system prompt (the tools are cached with
 * it, coming before it) and each message the hint names. At most three, under the API's four.
 * Other styles get the prompt as it is.
 */
export function markCacheBreakpoints(prompt: LanguageModelV3Prompt, style: PromptCacheStyle, hint: PromptCacheHint | undefined): LanguageModelV3Prompt {
  if (style !== 'breakpoints' || hint === undefined) return prompt;
  const marked = new Set(hint.breakpoints.filter((index) => index >= 0 && index < prompt.length));
  const system = prompt.findIndex((message) => message.role === 'system');
  if (system >= 0) marked.add(system);
  return prompt.map((message, index) => (marked.has(index) ? { ...message, providerOptions: { ...message.providerOptions, ...EPHEMERAL } } : message));
}

/** The request's provider options for OpenAI's cache: the agent's key. None for other styles. */
export function cacheProviderOptions(style: PromptCacheStyle, hint: PromptCacheHint | undefined): SharedV3ProviderOptions | undefined {
  if (style !== 'key' || hint === undefined) return undefined;
  return { openai: { promptCacheKey: hint.key } };
}
