import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { CallOptions, ChatModel, ModelError, ModelRequest, ModelResult } from './chat-model.js';
import { abortedError } from './model-error.js';
import { costUsd } from './prices.js';
import type { ModelPrice } from './prices.js';
import { messagesToPrompt, toolSpecsToFunctionTools } from './prompt-conversion.js';
import { backoffDelayMs, classifyError, resolveRetryPolicy } from './retry.js';
import type { RetryPolicy } from './retry.js';
import { streamTurn } from './stream-turn.js';

/**
 * Waits `ms` milliseconds. It must settle early (resolving or rejecting, either is fine) when
 * `signal` aborts, so a cancelled call does not sit out its backoff.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface ChatModelOptions {
  /** The spec the model was resolved from; becomes `ChatModel.spec`. */
  readonly spec: string;
  /** The model's price; without it every turn costs `null` (unknown). */
  readonly price?: ModelPrice | null;
  readonly retry?: Partial<RetryPolicy>;
  readonly sleep?: Sleep;
  /** A number in [0, 1), for backoff jitter. */
  readonly random?: () => number;
  /** Milliseconds since the epoch, for retry-after given as a date. */
  readonly now?: () => number;
  /** The environment variable holding the API key, named when the provider refuses the key. */
  readonly apiKeyEnv?: string;
}

/**
 * A ChatModel over any provider that implements the AI SDK's LanguageModelV3 contract. Each
 * call streams (`doStream`) so a silent connection is noticed, and retries what the policy
 * calls retryable with full-jitter backoff, honouring the provider's retry-after.
 */
export function createChatModel(languageModel: LanguageModelV3, options: ChatModelOptions): ChatModel {
  const policy = resolveRetryPolicy(options.retry);
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  const classificationContext = { apiKeyEnv: options.apiKeyEnv, now: options.now ?? Date.now };
  const classify = (error: unknown): ModelError => classifyError(error, classificationContext);

  async function call(request: ModelRequest, callOptions: CallOptions = {}): Promise<ModelResult> {
    const { signal, onRetry } = callOptions;
    // A function, not a property test, so the check after awaiting is not narrowed away.
    const aborted = (): boolean => signal?.aborted === true;
    const prompt = messagesToPrompt(request.messages);
    const tools = toolSpecsToFunctionTools(request.tools);
    let garbageAnswers = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (aborted()) return { ok: false, error: abortedError(), attempts: attempt - 1 };
      const result = await streamTurn(
        languageModel,
        { prompt, tools: tools.length === 0 ? undefined : tools, maxOutputTokens: request.maxOutputTokens },
        { signal, stallTimeoutMs: policy.stallTimeoutMs, classify },
      );
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
      if (!mayRetry) return { ok: false, error, attempts: attempt };
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

/** setTimeout that ends early, resolving, when the signal aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal?.addEventListener('abort', finish, { once: true });
  });
}
