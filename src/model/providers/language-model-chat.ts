import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { CallOptions, ChatModel, ModelError, ModelRequest, ModelResult } from '../chat-model.js';
import { abortableSleep, type Sleep } from '../resilience/abortable-sleep.js';
import { abortedError } from '../model-error.js';
import { costUsd } from '../prices.js';
import type { ModelPrice } from '../prices.js';
import type { ProviderGuard } from '../resilience/provider-guard.js';
import { messagesToPrompt, toolSpecsToFunctionTools } from './prompt-conversion.js';
import { cacheProviderOptions, markCacheBreakpoints, type PromptCacheStyle } from './prompt-caching.js';
import { backoffDelayMs, classifyError, resolveRetryPolicy } from '../resilience/retry.js';
import type { RetryPolicy } from '../resilience/retry.js';
import { streamTurn } from './stream-turn.js';

export { abortableSleep, type Sleep } from '../resilience/abortable-sleep.js';

export interface ChatModelOptions {
  /** The spec the model was resolved from; becomes `ChatModel.spec`. */
  readonly spec: string;
  /** The model's price; without it every turn costs `null` (unknown). */
  readonly price?: ModelPrice | null;
  readonly retry?: Partial<RetryPolicy> | undefined;
  readonly sleep?: Sleep | undefined;
  /** A number in [0, 1), for backoff jitter. */
  readonly random?: (() => number) | undefined;
  /** Milliseconds since the epoch, for retry-after given as a date. */
  readonly now?: (() => number) | undefined;
  /** The environment variable holding the API key, named when the provider refuses the key. */
  readonly apiKeyEnv?: string | undefined;
  /**
   * The concurrency gate and circuit breaker of the provider behind `languageModel`, shared
   * with every other model that talks to it; without one, attempts go out unguarded.
   */
  readonly guard?: ProviderGuard | undefined;
  /** How the provider's prompt cache is asked for when a request carries a cache hint; `prefix` (nothing sent) when absent. */
  readonly promptCache?: PromptCacheStyle | undefined;
}

/**
 * A ChatModel over any provider that implements the AI SDK's LanguageModelV3 contract. Each
 * call streams (`doStream`) so a silent connection is noticed, and retries what the policy
 * calls retryable with full-jitter backoff, honouring the provider's retry-after. With a
 * guard, every attempt waits its turn at the provider's gate and is refused at once, not
 * retried, while the provider's circuit is open.
 */
export function createChatModel(languageModel: LanguageModelV3, options: ChatModelOptions): ChatModel {
  const policy = resolveRetryPolicy(options.retry);
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const classificationContext = { apiKeyEnv: options.apiKeyEnv, now: options.now ?? Date.now };
  const classify = (error: unknown): ModelError => classifyError(error, classificationContext);

  const failed = (error: ModelError, attempts: number): ModelResult => ({
    ok: false,
    error: options.guard?.finalError(error) ?? error,
    attempts,
  });

  async function call(request: ModelRequest, callOptions: CallOptions = {}): Promise<ModelResult> {
    const { signal, onRetry, onProvider } = callOptions;
    // A function, not a property test, so the check after awaiting is not narrowed away.
    const aborted = (): boolean => signal?.aborted === true;
    const cacheStyle = options.promptCache ?? 'prefix';
    const prompt = markCacheBreakpoints(messagesToPrompt(request.messages), cacheStyle, request.cache);
    const providerOptions = cacheProviderOptions(cacheStyle, request.cache);
    const tools = toolSpecsToFunctionTools(request.tools);
    let garbageAnswers = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (aborted()) return { ok: false, error: abortedError(), attempts: attempt - 1 };
      const admission = options.guard === undefined ? null : await options.guard.admit(signal);
      // Refused attempts never reached the provider, so they are not counted.
      if (admission?.ok === false) return failed(admission.error, attempt - 1);
      const result = await streamTurn(
        languageModel,
        {
          prompt,
          ...(tools.length === 0 ? {} : { tools }),
          ...(tools.length > 0 && request.toolChoice !== undefined ? { toolChoice: { type: request.toolChoice } } : {}),
          ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
          ...(providerOptions === undefined ? {} : { providerOptions }),
        },
        { signal, stallTimeoutMs: policy.stallTimeoutMs, classify },
      );
      const notices = admission?.settle(result.ok ? null : result.error, result.ok || result.responded) ?? [];
      for (const notice of notices) onProvider?.(notice);
      if (result.ok) {
        const { turn } = result;
        return { ok: true, turn: { ...turn, costUsd: costUsd(turn.usage, options.price), attempts: attempt } };
      }
      const { error } = result;
      if (error.kind === 'garbage') garbageAnswers += 1;
      const mayRetry =
        error.retryable &&
        attempt < policy.maxAttempts &&
        !(error.kind === 'garbage' && garbageAnswers > policy.maxGarbageRetries);
      if (!mayRetry) return failed(error, attempt);
      const delayMs = backoffDelayMs(policy, attempt, random, error.retryAfterMs);
      onRetry?.({ attempt, error, delayMs });
      try {
        await sleep(delayMs, signal);
      } catch {
        // A sleep that rejects on abort is allowed; the check below reports it.
      }
      if (aborted()) return { ok: false, error: abortedError(), attempts: attempt };
    }
  }

  return { spec: options.spec, call };
}
