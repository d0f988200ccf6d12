import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ChatModel } from './chat-model.js';
import { createChatModel } from './providers/language-model-chat.js';
import type { Sleep } from './providers/language-model-chat.js';
import type { PromptCacheStyle } from './providers/prompt-caching.js';
import { priceFor, type ModelPrice, type PriceTable } from './prices.js';
import { refuseHtmlAnswers } from './resilience/html-answers.js';
import { PROCESS_PROVIDER_GUARDS, type ProviderGuard, type ProviderGuards } from './resilience/provider-guard.js';
import type { RetryPolicy } from './resilience/retry.js';
import { parseModelSpec, type ParsedSpec } from './model-spec.js';

export interface ResolveOptions {
  /** Overrides the provider's address (`--base-url`); required by `openai-compatible`. */
  readonly baseUrl?: string | undefined;
  /** The environment variable holding the API key (`--api-key-env`), instead of the provider's default. */
  readonly apiKeyEnv?: string | undefined;
  /** Where API keys are read from; nothing else is consulted. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly retry?: Partial<RetryPolicy> | undefined;
  /**
   * The concurrency gates and circuit breakers of the providers, one per provider and base
   * URL. Defaults to one set for the whole process, so every model that talks to the same
   * provider at the same address shares them. The in-process `sim` has none.
   */
  readonly providers?: ProviderGuards | undefined;
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly sleep?: Sleep | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
  /** Prices that override or add to the known ones (`--prices FILE.json`). */
  readonly prices?: PriceTable | undefined;
}

export type ResolveResult = { readonly ok: true; readonly model: ChatModel } | { readonly ok: false; readonly error: string };

/** Makes models for one provider prefix. */
export interface ModelFactory {
  /** How a spec for this provider is written, listed when a spec cannot be resolved. */
  readonly form: string;
  create(parsed: ParsedSpec, options: ResolveOptions): ResolveResult;
}

/**
 * Where each hosted provider is reached when no --base-url is given, and which environment
 * variable holds its key when no --api-key-env is given. `openai-compatible` has neither.
 */
export const PROVIDER_DEFAULTS = {
  openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  anthropic: { baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY' },
} as const satisfies Readonly<Record<string, ProviderDefaults>>;

export interface ProviderDefaults {
  readonly baseUrl: string;
  readonly apiKeyEnv: string;
}

/** The defaults of `provider`, or null for a provider that has none (`openai-compatible`, `sim`). */
export function providerDefaults(provider: string): ProviderDefaults | null {
  const all: Readonly<Record<string, ProviderDefaults>> = PROVIDER_DEFAULTS;
  return all[provider] ?? null;
}

export const BUILT_IN_FACTORIES: Readonly<Record<string, ModelFactory>> = {
  openai: {
    form: 'openai:<model>',
    create: (parsed, options) =>
      withApiKey(parsed, options, PROVIDER_DEFAULTS.openai, 'key', (apiKey, baseUrl) =>
        createOpenAI({ apiKey, baseURL: baseUrl, fetch: refuseHtmlAnswers(options.fetch, baseUrl) }).chat(parsed.modelId),
      ),
  },
  anthropic: {
    form: 'anthropic:<model>',
    create: (parsed, options) =>
      withApiKey(parsed, options, PROVIDER_DEFAULTS.anthropic, 'breakpoints', (apiKey, baseUrl) =>
        createAnthropic({ apiKey, baseURL: baseUrl, fetch: refuseHtmlAnswers(options.fetch, baseUrl) })(parsed.modelId),
      ),
  },
  'openai-compatible': {
    form: 'openai-compatible:<model> with --base-url URL',
    create: (parsed, options) => {
      const checked = checkProviderSpec(parsed, options);
      if (!checked.ok) return checked;
      if (checked.baseUrl === undefined) {
        return {
          ok: false,
          error:
            `The model ${parsed.spec} needs the address of the server that serves it: ` +
            'pass --base-url URL (for example --base-url http://127.0.0.1:8000/v1).',
        };
      }
      let apiKey: string | undefined;
      if (options.apiKeyEnv !== undefined) {
        const key = readKey(options, options.apiKeyEnv);
        if (!key.ok) return key;
        apiKey = key.apiKey;
      }
      const languageModel = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: checked.baseUrl,
        includeUsage: true,
        ...(apiKey === undefined ? {} : { apiKey }),
        fetch: refuseHtmlAnswers(options.fetch, checked.baseUrl),
      }).chatModel(parsed.modelId);
      const guard = guardFor(parsed, options, checked.baseUrl);
      return { ok: true, model: chatModelFor(languageModel, parsed, options, { apiKeyEnv: options.apiKeyEnv, guard, promptCache: 'prefix' }) };
    },
  },
};

/**
 * The ChatModel a spec names: `openai:<model>`, `anthropic:<model>`,
 * `openai-compatible:<model>` (with `baseUrl`), or any prefix in `factories`, which are
 * consulted before the built-in ones. Failures come back as `{ ok: false }` with a message
 * that says what to change. API keys are read from `options.env` only and never appear in
 * an error message.
 */
export function resolveModel(
  spec: string,
  options: ResolveOptions,
  factories: Readonly<Record<string, ModelFactory>> = {},
): ResolveResult {
  const all = { ...BUILT_IN_FACTORIES, ...factories };
  const accepted = `Accepted forms: ${Object.values(all)
    .map((factory) => factory.form)
    .join(', ')}.`;
  const parsed = parseModelSpec(spec);
  if (parsed === null) return { ok: false, error: `The model spec "${spec}" is malformed. ${accepted}` };
  const factory = all[parsed.provider];
  if (factory === undefined) {
    return { ok: false, error: `The model spec "${spec}" names an unknown provider "${parsed.provider}". ${accepted}` };
  }
  return factory.create(parsed, options);
}

/**
 * What one million tokens of the model a spec names cost, from the known prices and
 * `prices`; null when the price is not known (or the spec does not parse).
 */
export function modelPrice(spec: string, prices: PriceTable = {}): ModelPrice | null {
  const parsed = parseModelSpec(spec);
  return parsed === null ? null : priceFor(parsed.provider, parsed.modelId, prices);
}

type Checked = { readonly ok: true; readonly baseUrl: string | undefined } | { readonly ok: false; readonly error: string };

/** What every hosted provider's spec needs: a model id, no options, a usable base URL. */
function checkProviderSpec(parsed: ParsedSpec, options: ResolveOptions): Checked {
  if (parsed.modelId.trim() === '') {
    return {
      ok: false,
      error: `The model spec "${parsed.spec}" has no model name: write ${parsed.provider}:<model>, e.g. ${parsed.provider}:my-model.`,
    };
  }
  if ([...parsed.options.keys()].length > 0) {
    return { ok: false, error: `The model spec "${parsed.spec}" has options after "?", which ${parsed.provider} does not take.` };
  }
  if (options.baseUrl === undefined) return { ok: true, baseUrl: undefined };
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    return { ok: false, error: `--base-url "${options.baseUrl}" is not a URL; pass one like http://127.0.0.1:8000/v1.` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, error: `--base-url "${options.baseUrl}" must start with http:// or https://.` };
  }
  return { ok: true, baseUrl: options.baseUrl.replace(/\/+$/, '') };
}

function withApiKey(
  parsed: ParsedSpec,
  options: ResolveOptions,
  defaults: ProviderDefaults,
  promptCache: PromptCacheStyle,
  makeModel: (apiKey: string, baseUrl: string) => LanguageModelV3,
): ResolveResult {
  const checked = checkProviderSpec(parsed, options);
  if (!checked.ok) return checked;
  const keyEnv = options.apiKeyEnv ?? defaults.apiKeyEnv;
  const key = readKey(options, keyEnv);
  if (!key.ok) return key;
  const baseUrl = checked.baseUrl ?? defaults.baseUrl;
  const guard = guardFor(parsed, options, baseUrl);
  return { ok: true, model: chatModelFor(makeModel(key.apiKey, baseUrl), parsed, options, { apiKeyEnv: keyEnv, guard, promptCache }) };
}

function guardFor(parsed: ParsedSpec, options: ResolveOptions, baseUrl: string): ProviderGuard {
  return (options.providers ?? PROCESS_PROVIDER_GUARDS).guardFor(parsed.provider, baseUrl);
}

function readKey(
  options: ResolveOptions,
  keyEnv: string,
): { readonly ok: true; readonly apiKey: string } | { readonly ok: false; readonly error: string } {
  const apiKey = options.env[keyEnv]?.trim() ?? '';
  if (apiKey !== '') return { ok: true, apiKey };
  return {
    ok: false,
    error:
      `No API key: the environment variable ${keyEnv} is not set or empty. ` +
      'Set it, or pass --api-key-env NAME to read the key from another variable.',
  };
}

/**
 * The ChatModel a factory hands back for `languageModel`: the spec, the price (from the table
 * unless `extra` names one) and the retry policy and clocks of `options`.
 */
export function chatModelFor(
  languageModel: LanguageModelV3,
  parsed: ParsedSpec,
  options: ResolveOptions,
  extra: {
    readonly apiKeyEnv?: string | undefined;
    readonly guard?: ProviderGuard | undefined;
    readonly price?: ModelPrice;
    readonly promptCache?: PromptCacheStyle;
  },
): ChatModel {
  return createChatModel(languageModel, {
    spec: parsed.spec,
    price: extra.price ?? priceFor(parsed.provider, parsed.modelId, options.prices),
    retry: options.retry,
    sleep: options.sleep,
    random: options.random,
    now: options.now,
    apiKeyEnv: extra.apiKeyEnv,
    guard: extra.guard,
    promptCache: extra.promptCache,
  });
}
