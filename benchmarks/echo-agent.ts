import { z } from 'zod';
import type { ChatModel, ModelResult } from '../src/model/chat-model.js';
import type { Tool } from '../src/tools/tool.js';

/** A tool that does nothing but echo: what is left to measure is the harness around it. */
export const echoTool: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  execute: async (input) => ({ ok: true, output: input.text }),
};

const reply: ModelResult = {
  ok: true,
  turn: {
    text: '',
    toolCalls: [{ id: 'call', name: 'echo', input: '{"text":"a line of output, about as long as a short tool result"}' }],
    finishReason: 'tool-calls',
    usage: { inputTokens: 1000, outputTokens: 20, cachedInputTokens: 0 },
    costUsd: null,
    attempts: 1,
  },
};

/** A model that answers every call at once with one call of `echoTool`. */
export const echoModel: ChatModel = { spec: 'bench', call: async () => reply };
