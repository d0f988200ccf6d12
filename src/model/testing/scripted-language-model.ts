import { streamOfResult } from '../providers/generate-result-stream.js';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';

/** One answer the scripted model gives, in order. */
export interface ScriptedTurn {
  readonly text?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Counted from the prompt and the answer (about four characters a token) when absent. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number };
  /**
   * `length`: the answer stopped at its output limit, as the test wrote it (a last call's
   * arguments cut short, say). It ended on its own when absent.
   */
  readonly finishReason?: 'length';
}

export interface ScriptedToolCall {
  /** Generated (`call-<turn>-<index>`) when absent. */
  readonly id?: string;
  readonly name: string;
  /** Sent exactly as given: a string may be malformed JSON on purpose. */
  readonly input: string | Readonly<Record<string, unknown>>;
}

/** A call the scripted model received. */
export interface ScriptedCall {
  readonly method: 'generate' | 'stream';
  readonly options: LanguageModelV3CallOptions;
}

export interface ScriptedLanguageModel extends LanguageModelV3 {
  /** Every call, in order, with the prompt and tools it carried. */
  readonly calls: readonly ScriptedCall[];
  /** Turns not yet answered. */
  remainingTurns(): number;
}

/**
 * A LanguageModelV3 that answers a fixed queue of turns, one per call, through either
 * `doGenerate` or `doStream`, and records what it was asked. It stands in for a provider
 * where the test is about everything around the model. Running out of turns is a mistake in
 * the test, so it throws.
 */
export function createScriptedLanguageModel(
  turns: readonly ScriptedTurn[],
  identity: { readonly provider?: string; readonly modelId?: string } = {},
): ScriptedLanguageModel {
  const calls: ScriptedCall[] = [];
  let next = 0;

  function take(method: ScriptedCall['method'], options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
    calls.push({ method, options });
    const turn = turns[next];
    if (turn === undefined) {
      throw new Error(`The scripted model has ${turns.length} turns but was called ${calls.length} times.`);
    }
    next += 1;
    return answer(turn, next, options);
  }

  return {
    specificationVersion: 'v3',
    provider: identity.provider ?? 'scripted',
    modelId: identity.modelId ?? 'scripted-model',
    supportedUrls: {},
    calls,
    remainingTurns: () => turns.length - next,
    doGenerate: (options) => Promise.resolve().then(() => take('generate', options)),
    doStream: (options) =>
      Promise.resolve().then(() => ({ stream: streamOfResult(take('stream', options)) })),
  };
}

function answer(turn: ScriptedTurn, turnNumber: number, options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
  const content: LanguageModelV3Content[] = [];
  const text = turn.text ?? '';
  if (text !== '') content.push({ type: 'text', text });
  (turn.toolCalls ?? []).forEach((call, index) => {
    content.push({
      type: 'tool-call',
      toolCallId: call.id ?? `call-${turnNumber}-${index}`,
      toolName: call.name,
      input: typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
    });
  });
  const finishReason: LanguageModelV3FinishReason =
    turn.finishReason === 'length'
      ? { unified: 'length', raw: 'length' }
      : (turn.toolCalls ?? []).length > 0
        ? { unified: 'tool-calls', raw: 'tool_calls' }
        : { unified: 'stop', raw: 'stop' };
  const outputCharacters = content.reduce(
    (sum, part) => sum + (part.type === 'text' ? part.text.length : part.type === 'tool-call' ? part.input.length : 0),
    0,
  );
  const usage = turn.usage ?? {
    inputTokens: Math.ceil(JSON.stringify(options.prompt).length / 4),
    outputTokens: Math.ceil(outputCharacters / 4),
  };
  return { content, finishReason, usage: usageOf(usage), warnings: [] };
}

function usageOf(usage: NonNullable<ScriptedTurn['usage']>): LanguageModelV3Usage {
  const cached = usage.cachedInputTokens ?? 0;
  return {
    inputTokens: { total: usage.inputTokens, noCache: usage.inputTokens - cached, cacheRead: cached, cacheWrite: 0 },
    outputTokens: { total: usage.outputTokens, text: usage.outputTokens, reasoning: 0 },
  };
}
