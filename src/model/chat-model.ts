import type { Message, ToolCall } from './messages.js';

/** A tool as the model sees it: a name, a description and a JSON Schema for its arguments. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly maxOutputTokens?: number;
  /**
   * `none`: the tools are described but the model must answer in text. A request whose history
   * holds tool calls must still describe the tools for some providers, even when no call is
   * wanted (a summary). `auto` (the model chooses) when absent.
   */
  readonly toolChoice?: 'auto' | 'none';
  /** What the provider's prompt cache is told of this request; nothing when absent. */
  readonly cache?: PromptCacheHint;
}

/**
 * Where a request's stable prefix ends, for the providers that cache prompts. Anthropic caches
 * only up to explicit breakpoints: the system prompt (with the tools before it) is always one,
 * and so is each message named here. OpenAI caches any repeated prefix by itself and routes
 * requests with one `prompt_cache_key` to the same cache, so every call of an agent gives the
 * same key. A provider that caches prefixes by itself and takes no key is told nothing.
 */
export interface PromptCacheHint {
  /** The same for every call of one agent, and different from every other agent's. */
  readonly key: string;
  /**
   * Indexes into `messages` of the messages a cached prefix ends at: the last message of the
   * previous call's conversation, whose prefix that call wrote and this one reads, and the last
   * of this one's, which it writes for the next. Messages after them (the scratchpad) change
   * from call to call and are never cached.
   */
  readonly breakpoints: readonly number[];
}

export interface Usage {
  /** Every input token of the request, read from the cache and written to it included. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  readonly cachedInputTokens: number;
  /** Input tokens written to the provider's prompt cache (billed above plain input by Anthropic); absent: none. */
  readonly cacheWriteTokens?: number;
}

/** One answer of the model: text, tool calls, or both. */
export interface ModelTurn {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string;
  readonly usage: Usage;
  /** US dollars, or null when the model's price is not known. */
  readonly costUsd: number | null;
  /** How many HTTP attempts this turn took (1 when nothing was retried). */
  readonly attempts: number;
}

/** Why a model call failed, in words a retry policy (and a person) can act on. */
export type ModelErrorKind =
  | 'rate-limit'
  | 'server'
  | 'timeout'
  | 'stall'
  | 'network'
  | 'bad-request'
  | 'context-length'
  | 'auth'
  | 'garbage'
  /** The provider's circuit breaker is open: colony is not calling it until its cool-down passes. */
  | 'circuit-open'
  /**
   * No model API can be reached at the address, and waiting will not change that: it has not
   * answered once in this process and still cannot be reached, it has answered only with
   * server errors and never once succeeded, Node's fetch refuses its port, or what answers is
   * a web page (a proxy's, a login's), not the API. Most likely a wrong address or a broken
   * server, not a busy provider, so it is not worth waiting for.
   */
  | 'unreachable'
  | 'aborted';

export interface ModelError {
  readonly kind: ModelErrorKind;
  readonly message: string;
  /** The HTTP status, when there was one. */
  readonly status: number | null;
  readonly retryable: boolean;
  /** Milliseconds the provider asked us to wait (retry-after), when it did. */
  readonly retryAfterMs: number | null;
}

export interface RetryNotice {
  readonly attempt: number;
  readonly error: ModelError;
  readonly delayMs: number;
}

/**
 * Something a provider's concurrency gate or circuit breaker did, told to the call whose
 * outcome caused it: the limit of calls at once moved, or the circuit opened or closed.
 * `provider` names the provider and its address, e.g. `openai at https://api.openai.com/v1`.
 */
export type ProviderNotice =
  | {
      readonly type: 'limited';
      readonly provider: string;
      readonly from: number;
      readonly to: number;
      readonly reason: string;
      /** How long a retry-after holds every call to the provider back, from now. */
      readonly holdMs: number | null;
    }
  | {
      readonly type: 'circuit-opened';
      readonly provider: string;
      readonly failures: number;
      readonly reason: string;
      /** When one trial call will be let through, from now. */
      readonly retryInMs: number;
    }
  | { readonly type: 'circuit-closed'; readonly provider: string; readonly openMs: number };

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Told before each wait between attempts, so the caller can record it. */
  readonly onRetry?: (notice: RetryNotice) => void;
  /** Told when this call's outcome changed how its provider is called, so the caller can record it. */
  readonly onProvider?: (notice: ProviderNotice) => void;
}

export type ModelResult =
  | { readonly ok: true; readonly turn: ModelTurn }
  | { readonly ok: false; readonly error: ModelError; readonly attempts: number };

/**
 * A model colony can talk to. `call` must not throw for provider failures: they come back
 * as `{ ok: false }` after the retries the policy allows. It throws only on programmer error.
 */
export interface ChatModel {
  /** The spec it was resolved from, e.g. `anthropic:claude-opus-4-5` or `sim?seed=7`. */
  readonly spec: string;
  call(request: ModelRequest, options?: CallOptions): Promise<ModelResult>;
}
