import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ModelError, Usage } from '../chat-model.js';
import type { ToolCall } from '../messages.js';
import { abortedError, modelError } from '../model-error.js';

/** One streamed answer, assembled. */
export interface StreamedTurn {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string;
  readonly usage: Usage;
}

export type StreamTurnResult =
  | { readonly ok: true; readonly turn: StreamedTurn }
  | {
      readonly ok: false;
      readonly error: ModelError;
      /** Whether the provider sent an HTTP response, of any status, before the attempt failed. */
      readonly responded: boolean;
    };

export interface StreamTurnOptions {
  /** The caller's signal: aborting it cancels the request. */
  readonly signal?: AbortSignal | undefined;
  /** Silence longer than this (before the first part or between parts) abandons the request. */
  readonly stallTimeoutMs: number;
  /** Turns whatever the provider threw or streamed as an error into a ModelError. */
  readonly classify: (error: unknown) => ModelError;
}

/**
 * One attempt: `doStream`, then read the stream to its `finish` part. The request gets its own
 * AbortController, linked to the caller's signal and to a watchdog that fires when nothing has
 * arrived for `stallTimeoutMs`. Waiting is raced against that controller too, so a model that
 * ignores its abort signal still cannot hang the call.
 */
export async function streamTurn(
  model: LanguageModelV3,
  callOptions: Omit<LanguageModelV3CallOptions, 'abortSignal'>,
  options: StreamTurnOptions,
): Promise<StreamTurnResult> {
  const controller = new AbortController();
  const callerSignal = options.signal;
  const forwardAbort = (): void => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted === true) forwardAbort();
  callerSignal?.addEventListener('abort', forwardAbort, { once: true });

  let stalled = false;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const rearmWatchdog = (): void => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      stalled = true;
      controller.abort(new Error(`no data from the provider for ${options.stallTimeoutMs} ms`));
    }, options.stallTimeoutMs);
  };

  let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
  let finished = false;
  // doStream resolves once the provider's response has begun: from then on, it has answered.
  let responded = false;
  try {
    rearmWatchdog();
    const { stream } = await untilAborted(model.doStream({ ...callOptions, abortSignal: controller.signal }), controller.signal);
    responded = true;
    reader = stream.getReader();
    const assembly = new TurnAssembly();
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), controller.signal);
      if (done) break;
      rearmWatchdog();
      if (value.type === 'error') return { ok: false, error: options.classify(value.error), responded };
      assembly.add(value);
    }
    const turn = assembly.result();
    if (turn === null) {
      return {
        ok: false,
        error: modelError('network', 'The response stream ended before the model finished its answer.', null, true),
        responded,
      };
    }
    finished = true;
    return { ok: true, turn };
  } catch (error) {
    if (callerSignal?.aborted === true) return { ok: false, error: abortedError(), responded };
    if (stalled) {
      return {
        ok: false,
        error: modelError(
          'stall',
          `The provider went silent for more than ${options.stallTimeoutMs} ms in the middle of a request.`,
          null,
          true,
        ),
        responded,
      };
    }
    // A status the provider refused the request with is an answer too.
    return { ok: false, error: options.classify(error), responded: responded || (APICallError.isInstance(error) && error.statusCode !== undefined) };
  } finally {
    clearTimeout(watchdog);
    callerSignal?.removeEventListener('abort', forwardAbort);
    if (!finished) {
      // Release the connection of an abandoned request; errors from cancelling are moot.
      controller.abort();
      reader?.cancel().catch(() => undefined);
    }
  }
}

/** Collects text, tool calls and the finish part of one stream. */
class TurnAssembly {
  private text = '';
  private readonly toolCalls: ToolCall[] = [];
  private finish: { finishReason: string; usage: Usage } | null = null;

  add(part: LanguageModelV3StreamPart): void {
    switch (part.type) {
      case 'text-delta':
        this.text += part.delta;
        break;
      case 'tool-call':
        if (part.providerExecuted !== true) {
          this.toolCalls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
        }
        break;
      case 'finish': {
        // Only providers that bill cache writes apart (Anthropic) report any.
        const cacheWrite = part.usage.inputTokens.cacheWrite ?? 0;
        this.finish = {
          finishReason: part.finishReason.unified,
          usage: {
            inputTokens: part.usage.inputTokens.total ?? 0,
            outputTokens: part.usage.outputTokens.total ?? 0,
            cachedInputTokens: part.usage.inputTokens.cacheRead ?? 0,
            ...(cacheWrite === 0 ? {} : { cacheWriteTokens: cacheWrite }),
          },
        };
        break;
      }
      default:
        break;
    }
  }

  result(): StreamedTurn | null {
    if (this.finish === null) return null;
    return { text: this.text, toolCalls: this.toolCalls, ...this.finish };
  }
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
