import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ColonyEvent } from '../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../model/chat-model.js';
import type { ToolCall } from '../model/messages.js';
import { CUT_OFF_OPENING } from '../protocol/message-openings.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import type { AnyTool } from '../tools/tool.js';
import { runAgent } from './agent-loop.js';
import type { ContextPolicy } from './compaction.js';
import { rebuildConversation } from './conversation-rebuild.js';
import { cutOffMessage } from './cut-off-call.js';
import { interruptedAnswer } from './agent-restore.js';
import { AGENT_ID, countingTools, recordStart, restartedLog, SYSTEM_PROMPT, TASK, testRecorder } from './testing/agent-restart.js';

interface Answer {
  readonly calls: readonly ToolCall[];
  /** `length`: the provider stopped the answer at its output limit. */
  readonly finishReason?: string;
}

/** A model that gives `answers` in order and keeps every request. */
function answering(answers: readonly Answer[]): ChatModel & { readonly requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    spec: 'scripted',
    requests,
    async call(request): Promise<ModelResult> {
      requests.push(request);
      const answer = answers[requests.length - 1];
      if (answer === undefined) throw new Error(`the script has ${answers.length} answers`);
      const usage = { inputTokens: 100, outputTokens: 50, cachedInputTokens: 0 };
      return { ok: true, turn: { text: '', toolCalls: answer.calls, finishReason: answer.finishReason ?? 'tool-calls', usage, costUsd: 0, attempts: 1 } };
    },
  };
}

const call = (id: string, name: string, input: unknown): ToolCall => ({ id, name, input: typeof input === 'string' ? input : JSON.stringify(input) });

/** A tool that takes no arguments, so an empty call to it would run. */
const status: AnyTool = { name: 'status', description: 'Says how things stand.', parameters: z.object({}), execute: async () => ({ ok: true, output: 'all well' }) };

const CONTEXT: ContextPolicy = { windowTokens: 100_000, outputTokens: 2_000, threshold: 0.8, compaction: true, compactionPrompt: 'Summarise.', keptTurns: 2 };
const CUT = cutOffMessage({ outputTokens: 2_000 });

async function run(answers: readonly Answer[], context: ContextPolicy | null = CONTEXT) {
  const store = createMemoryEventStore();
  const recorder = testRecorder(store);
  const { tools, runs } = countingTools();
  const all = [...tools, status];
  recordStart(recorder, all);
  const model = answering(answers);
  const outcome = await runAgent({ model, tools: all, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 10, ...(context === null ? {} : { context }) });
  const events = await store.read({ agentId: AGENT_ID });
  const ended = events.flatMap((event) => (event.type === 'tool.ended' ? [`${event.data.callId}: ${event.data.output}`] : []));
  return { outcome, runs, ended, events, model };
}

const finishing: Answer = { calls: [call('f', 'finish', { summary: 'done' })] };

describe('a tool call cut off at the output limit', () => {
  it('is answered with what happened and to do less in one answer, after the calls before it ran, and the agent goes on', async () => {
    const { outcome, runs, ended, model } = await run([
      { finishReason: 'length', calls: [call('a', 'echo', { text: 'one' }), call('b', 'echo', { text: 'two' }), call('c', 'echo', '{"text": "thr')] },
      finishing,
    ]);
    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(runs).toEqual(['echo one', 'echo two', 'finish']);
    expect(ended).toEqual(['a: echo: one', 'b: echo: two', `c: error: ${CUT}`, 'f: finished']);
    expect(model.requests[0]?.maxOutputTokens).toBe(2_000);
    // The next request shows the model its cut call answered so.
    expect(model.requests[1]?.messages.at(-1)).toEqual({ role: 'tool', callId: 'c', toolName: 'echo', content: `error: ${CUT}`, isError: true });
  });

  it('says so whether its arguments were empty, not JSON, or not what the tool takes', async () => {
    for (const input of ['', '{"text": "x', '{}']) {
      const { ended, runs } = await run([{ finishReason: 'length', calls: [call('a', 'echo', input)] }, finishing]);
      expect(ended[0], input).toBe(`a: error: ${CUT}`);
      expect(runs).toEqual(['finish']);
    }
    // A tool that takes no arguments is not run on the empty arguments of a cut call either.
    const empty = await run([{ finishReason: 'length', calls: [call('a', 'status', '')] }, finishing]);
    expect(empty.ended[0]).toBe(`a: error: ${CUT}`);
  });

  it('runs a whole last call of a cut answer, and answers the same broken call in a whole answer as malformed', async () => {
    const whole = await run([{ finishReason: 'length', calls: [call('a', 'echo', { text: 'whole' })] }, finishing]);
    expect(whole.ended[0]).toBe('a: echo: whole');
    const broken = await run([{ finishReason: 'tool-calls', calls: [call('a', 'echo', '{"text": "x')] }, finishing]);
    expect(broken.ended[0]).toMatch(/^a: error: invalid arguments for echo: not valid JSON/);
    // Only the last call of a cut answer can be cut: a broken one before it is the model's own mistake.
    const earlier = await run([{ finishReason: 'length', calls: [call('a', 'echo', '{"text": "x'), call('b', 'echo', { text: 'y' })] }, finishing]);
    expect(earlier.ended.slice(0, 2)).toEqual([expect.stringMatching(/^a: error: invalid arguments for echo: not valid JSON/), 'b: echo: y']);
  });

  it('names the provider\'s own limit when the request set none', async () => {
    const { ended } = await run([{ finishReason: 'length', calls: [call('a', 'echo', '{"te')] }, finishing], null);
    expect(ended[0]).toBe(`a: error: ${cutOffMessage({ outputTokens: null })}`);
    expect(ended[0]).toContain("stopped at the provider's output limit in the middle of this call");
    expect(CUT).toContain('stopped at its output limit of 2,000 tokens in the middle of this call');
  });

  it('is answered so after a restart too, when colony stopped before the call started', async () => {
    const first = await run([{ finishReason: 'length', calls: [call('a', 'echo', { text: 'one' }), call('b', 'echo', '{"text')] }, finishing]);
    // The log as a kill right after the first call ended leaves it: the cut call never started.
    const cutAt = first.events.findIndex((event) => event.type === 'tool.ended');
    const durable: ColonyEvent[] = first.events.slice(0, cutAt + 1);
    const conversation = rebuildConversation(durable);
    expect(conversation.cutOff).toEqual({ outputTokens: 2_000 });
    expect(conversation.notStarted.map((each) => each.id)).toEqual(['b']);

    const log = restartedLog(createMemoryEventStore, durable);
    const { tools } = countingTools();
    const outcome = await runAgent({
      model: answering([finishing]),
      tools: [...tools, status],
      systemPrompt: SYSTEM_PROMPT,
      task: TASK,
      recorder: testRecorder(log),
      maxSteps: 10,
      restore: { conversation, attempt: 2, answerInterrupted: async (each) => interruptedAnswer(each) },
    });
    expect(outcome.status).toBe('ended');
    const ended = (await log.read({ agentId: AGENT_ID })).flatMap((event) => (event.type === 'tool.ended' ? [`${event.data.callId}: ${event.data.output}`] : []));
    expect(ended).toEqual(['a: echo: one', `b: error: ${CUT}`, 'f: finished']);
  });

  it('is told in a text that opens as the protocol says, so a model can tell it from other errors', () => {
    expect(readFileSync(new URL('./cut-off-call.md', import.meta.url), 'utf8').startsWith(CUT_OFF_OPENING)).toBe(true);
    expect(CUT.startsWith(CUT_OFF_OPENING)).toBe(true);
  });
});
