import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EventBody } from '../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../model/chat-model.js';
import type { ToolCall } from '../model/messages.js';
import type { AnyTool } from '../tools/tool.js';
import { runAgent, type AgentInbox, type InboxDelivery } from './agent-loop.js';
import { type AgentRecorder } from './types.js';

/** A planner's inbox driven by the test: messages are posted, children close. */
function testInbox() {
  const queue: InboxDelivery[] = [];
  let openChildren = 0;
  let wake: (() => void) | null = null;
  let waits = 0;
  const inbox: AgentInbox = {
    take: async () => queue.splice(0),
    pending: async () => ({ unread: queue.length, openChildren }),
    wait: (signal) =>
      new Promise<void>((resolve) => {
        waits += 1;
        wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
  return {
    inbox,
    waits: () => waits,
    setOpenChildren(count: number) {
      openChildren = count;
    },
    /** A child hands off: one fewer open, one message waiting, the waiter woken. */
    handOff(content: string) {
      openChildren -= 1;
      queue.push({ fromTaskId: 'task-child', content });
      wake?.();
    },
  };
}

function turn(toolCalls: ToolCall[], text = ''): ModelResult {
  return {
    ok: true,
    turn: { text, toolCalls, finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, costUsd: null, attempts: 1 },
  };
}

/** A model whose every answer is decided when it is asked, so a test can act between calls. */
function liveModel(answer: (request: ModelRequest, index: number) => ModelResult): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'live',
    requests,
    async call(request) {
      requests.push({ ...request, messages: [...request.messages] });
      return answer(request, requests.length - 1);
    },
  };
}

const finish: AnyTool = {
  name: 'finish',
  description: 'Ends the agent.',
  parameters: z.object({ summary: z.string() }),
  execute: async () => ({ ok: true, output: 'finished', endsAgent: true }),
};

function recorder(): AgentRecorder & { events: EventBody[] } {
  const events: EventBody[] = [];
  return { events, record: (event) => events.push(event), flush: () => undefined };
}

const finishCall = (id: string): ToolCall => ({ id, name: 'finish', input: '{"summary":"all done"}' });

describe('runAgent with an inbox (planners)', () => {
  it('waits without model calls while children are open, then continues with their handoff', async () => {
    const box = testInbox();
    box.setOpenChildren(1);
    const model = liveModel((_request, index) => {
      if (index === 0) {
        // Nothing to do until the child hands off: the loop must wait, not call the model again.
        setTimeout(() => box.handOff('Handoff from task task-child "x"\nstatus: done'), 30);
        return turn([], 'Waiting for 1 handoff.');
      }
      return turn([finishCall('f')]);
    });
    const rec = recorder();
    const outcome = await runAgent({ model, tools: [finish], systemPrompt: 's', task: 't', recorder: rec, maxSteps: 5, inbox: box.inbox });
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(model.requests).toHaveLength(2);
    expect(box.waits()).toBeGreaterThanOrEqual(1);
    expect(model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'Handoff from task task-child "x"\nstatus: done' });
    const types = rec.events.map((event) => event.type);
    expect(types).toContain('agent.waiting');
    expect(types).not.toContain('agent.nudged');
    expect(types.indexOf('message.received')).toBeGreaterThan(types.indexOf('agent.waiting'));
  });

  it('wakes a planner that finished when a late handoff arrives, and it replans before finishing again', async () => {
    const box = testInbox();
    box.setOpenChildren(1);
    const model = liveModel((_request, index) => {
      if (index === 0) {
        setTimeout(() => box.handOff('Handoff from task task-child "late"\nstatus: failed'), 30);
        return turn([finishCall('f1')]);
      }
      return turn([finishCall('f2')], 'A late handoff failed; replanning.');
    });
    const outcome = await runAgent({ model, tools: [finish], systemPrompt: 's', task: 't', recorder: recorder(), maxSteps: 5, inbox: box.inbox });
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(model.requests).toHaveLength(2);
    const lastMessages = model.requests[1]?.messages ?? [];
    expect(lastMessages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('status: failed') });
  });

  it('nudges a planner that answers without tools when nothing is due', async () => {
    const box = testInbox();
    const model = liveModel((_request, index) => (index === 0 ? turn([], 'Hmm.') : turn([finishCall('f')])));
    const rec = recorder();
    const outcome = await runAgent({ model, tools: [finish], systemPrompt: 's', task: 't', recorder: rec, maxSteps: 5, inbox: box.inbox });
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(box.waits()).toBe(0);
    expect(rec.events.map((event) => event.type)).toContain('agent.nudged');
  });

  it('stops a waiting planner when the run is cancelled, without another model call', async () => {
    const box = testInbox();
    box.setOpenChildren(2);
    const controller = new AbortController();
    const model = liveModel(() => {
      setTimeout(() => controller.abort(), 20);
      return turn([], 'Waiting.');
    });
    const outcome = await runAgent({
      model,
      tools: [finish],
      systemPrompt: 's',
      task: 't',
      recorder: recorder(),
      maxSteps: 5,
      inbox: box.inbox,
      signal: controller.signal,
    });
    expect(outcome).toMatchObject({ status: 'failed', reason: 'stopped: the run was cancelled' });
    expect(model.requests).toHaveLength(1);
  });

  it('tells the agent what beforeModelCall reports, before the call', async () => {
    const model = liveModel(() => turn([finishCall('f')]));
    const rec = recorder();
    await runAgent({
      model,
      tools: [finish],
      systemPrompt: 's',
      task: 't',
      recorder: rec,
      maxSteps: 2,
      beforeModelCall: async () => 'your view of main is behind',
    });
    expect(model.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'your view of main is behind' });
    expect(rec.events[0]).toMatchObject({ type: 'agent.nudged', data: { message: 'your view of main is behind' } });
  });
});
