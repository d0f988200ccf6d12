import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventBody } from '../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../model/chat-model.js';
import type { AnyTool } from '../tools/tool.js';
import { runAgent, type ModelCallCheck } from './agent-loop.js';

function busyModel(): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted',
    requests,
    async call(request): Promise<ModelResult> {
      requests.push({ ...request, messages: [...request.messages] });
      const toolCalls = [{ id: `call-${requests.length}`, name: 'note', input: '{"text":"more"}' }];
      return { ok: true, turn: { text: '', toolCalls, finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, costUsd: 0, attempts: 1 } };
    },
  };
}

const note: AnyTool = {
  name: 'note',
  description: 'Takes a note.',
  parameters: z.object({ text: z.string() }),
  execute: async () => ({ ok: true, output: 'noted' }),
};

describe('the agent loop told to stop before a call', () => {
  it('tells the last-call notice, makes that call, then ends without another, saying why', async () => {
    const model = busyModel();
    const events: EventBody[] = [];
    const checks: ModelCallCheck[] = [null, 'Budget used up: this is your last call.', { stop: 'stopped: the budget was used up' }];
    const outcome = await runAgent({
      model,
      tools: [note],
      systemPrompt: 's',
      task: 't',
      recorder: { record: (event) => events.push(event), flush: () => undefined },
      maxSteps: 10,
      beforeModelCall: async () => checks.shift() ?? null,
    });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'Budget used up: this is your last call.' });
    expect(outcome).toEqual({ status: 'failed', steps: 2, reason: 'stopped: the budget was used up', lastToolCall: 'note({"text":"more"})' });
    expect(events.filter((event) => event.type === 'model.requested')).toHaveLength(2);
  });
});
