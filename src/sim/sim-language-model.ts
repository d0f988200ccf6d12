import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FunctionTool,
  LanguageModelV3GenerateResult,
} from '@ai-sdk/provider';
import { streamOfResult } from '../model/providers/generate-result-stream.js';
import { abortableSleep, type Sleep } from '../model/providers/language-model-chat.js';
import { promptToMessages } from '../model/providers/prompt-conversion.js';
import { contextLengthError, contextOverflow } from './sim-context-window.js';
import type { SimOptions } from './sim-options.js';
import { cutAtOutputLimit } from './sim-output-limit.js';
import { simLatencyMs, simStalls, simTurn } from './sim-turn.js';

/** The longest a timer waits (about 24 days): a stalled call waits this, or until aborted. */
const NEVER_MS = 2 ** 31 - 1;

/**
 * The simulated model behind the AI SDK's provider contract, like any real provider: it gets
 * a prompt and tools, waits its seeded latency and answers with the next turn of the planner
 * policy (when `create_task` is among the tools) or the worker policy, or with a summary when
 * asked to compact. A request larger than its context window (`SimOptions.context`) is refused
 * at once with the 400 a real provider gives. An answer longer than the request's
 * `maxOutputTokens` stops there, in the middle of a tool call's arguments if that is where the
 * output runs out, with finish reason `length` (see `cutAtOutputLimit`).
 * It keeps no state between calls, so it can be served over HTTP as it is.
 */
export function createSimLanguageModel(options: SimOptions, sleep: Sleep = abortableSleep): LanguageModelV3 {
  async function generate(call: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const messages = promptToMessages(call.prompt);
    const toolNames = (call.tools ?? [])
      .filter((tool): tool is LanguageModelV3FunctionTool => tool.type === 'function')
      .map((tool) => tool.name);
    const overflow = contextOverflow(options, messages);
    if (overflow !== null) throw contextLengthError(overflow.limit, overflow.tokens);
    await sleep(simLatencyMs(options, messages), call.abortSignal);
    if (simStalls(options, messages, toolNames)) {
      // A provider that never answers: nothing comes until the caller gives up on the call.
      await sleep(NEVER_MS, call.abortSignal);
      throw call.abortSignal?.reason ?? new Error('the simulated provider never answered');
    }
    const { answer: turn, cut } = cutAtOutputLimit(simTurn(messages, toolNames, options), call.maxOutputTokens, options.tokens);
    const content: LanguageModelV3Content[] = [];
    if (turn.text !== '') content.push({ type: 'text', text: turn.text });
    for (const toolCall of turn.toolCalls) {
      content.push({ type: 'tool-call', toolCallId: toolCall.id, toolName: toolCall.name, input: toolCall.input });
    }
    const { inputTokens, outputTokens } = turn.usage;
    return {
      content,
      finishReason: cut
        ? { unified: 'length', raw: 'length' }
        : turn.toolCalls.length > 0
          ? { unified: 'tool-calls', raw: 'tool_calls' }
          : { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
      },
      warnings: [],
    };
  }

  return {
    specificationVersion: 'v3',
    provider: 'sim',
    modelId: `sim?seed=${options.seed}`,
    supportedUrls: {},
    doGenerate: generate,
    doStream: async (call) => ({ stream: streamOfResult(await generate(call)) }),
  };
}
